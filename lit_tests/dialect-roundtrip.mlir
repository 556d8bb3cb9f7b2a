// RUN: xdsl-opt %s | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | xdsl-opt | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// Test that every dan op, type and attribute survives a print/parse round trip,
// in the custom and in the generic format.

// CHECK-LABEL: dan.kernel @tiny attributes {target = #dan.target<contest>} {
// CHECK-NEXT:    %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
// CHECK-NEXT:    %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
// CHECK-NEXT:    %c, %tc = dan.alloc after(%t1) {id = 2, buf = 1, offset = 0} : !dan.buf<UB, 64>
// CHECK-NEXT:    %t3 = dan.compute "EXP" on VECTOR cycles(10) bufs(%a, %c) after(%t1, %tc) {id = 3}
// CHECK-NEXT:    %so = dan.spill_out %c after(%t3) {id = 6}
// CHECK-NEXT:    %c2, %si = dan.spill_in %c after(%so) {id = 7, offset = 512}
// CHECK-NEXT:    %t4 = dan.free %a after(%t3) {id = 4}
// CHECK-NEXT:    %t5 = dan.free %c2 after(%t3, %si) {id = 5, note = "kept"}
// CHECK-NEXT:  }

// GENERIC-LABEL: "dan.kernel"() <{sym_name = "tiny"}> ({
// GENERIC-NEXT:    %a, %ta = "dan.alloc"() <{id = 0 : i64, buf = 0 : i64, offset = 0 : i64}> : () -> (!dan.buf<L1, 128>, !dan.token)
// GENERIC:         %t3 = "dan.compute"(%a, %c, %t1, %tc) <{id = 3 : i64, op = "EXP", pipe = #dan.pipe<VECTOR>, cycles = 10 : i64, operandSegmentSizes = array<i32: 2, 2>}> : (!dan.buf<L1, 128>, !dan.buf<UB, 64>, !dan.token, !dan.token) -> !dan.token
// GENERIC:       }) {target = #dan.target<contest>} : () -> ()
dan.kernel @tiny attributes {target = #dan.target<contest>} {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
  %c, %tc = dan.alloc after(%t1) {id = 2, buf = 1, offset = 0} : !dan.buf<UB, 64>
  %t3 = dan.compute "EXP" on VECTOR cycles(10) bufs(%a, %c) after(%t1, %tc) {id = 3}
  %so = dan.spill_out %c after(%t3) {id = 6}
  %c2, %si = dan.spill_in %c after(%so) {id = 7, offset = 512}
  %t4 = dan.free %a after(%t3) {id = 4}
  %t5 = dan.free %c2 after(%t3, %si) {id = 5, note = "kept"}
}

// Test that a kernel without a layout (no offsets), an op without buffers and an
// empty dependency list print without the optional parts.

// CHECK-LABEL: dan.kernel @order_only attributes {target = #dan.target<ascend910b>} {
// CHECK-NEXT:    %b, %t0 = dan.alloc {id = 0, buf = 7} : !dan.buf<L0C, 256>
// CHECK-NEXT:    %t1 = dan.compute "NOP" on CUBE cycles(0) {id = 1}
// CHECK-NEXT:    %t2 = dan.compute "MATMUL" on CUBE cycles(64) bufs(%b) after(%t0, %t1) {id = 2}
// CHECK-NEXT:    %t3 = dan.free %b after(%t2) {id = 3}
// CHECK-NEXT:  }
dan.kernel @order_only attributes {target = #dan.target<ascend910b>} {
  %b, %t0 = dan.alloc {id = 0, buf = 7} : !dan.buf<L0C, 256>
  %t1 = dan.compute "NOP" on CUBE cycles(0) {id = 1}
  %t2 = dan.compute "MATMUL" on CUBE cycles(64) bufs(%b) after(%t0, %t1) {id = 2}
  %t3 = dan.free %b after(%t2) {id = 3}
}

// Test that a custom target prints all of its fields, a kernel without a target
// attribute stays without one, and an empty kernel prints an empty body.

// CHECK-LABEL: dan.kernel @custom attributes {target = #dan.target<"mychip", L1 = 1024, UB = 512, L0A = 128, L0B = 128, L0C = 256, peak = [L1, UB], rate = 0.5, startup = 150>} {
// CHECK-NEXT:  }
dan.kernel @custom attributes {target = #dan.target<"mychip", L1 = 1024, UB = 512, L0A = 128, L0B = 128, L0C = 256>} {
}

// CHECK-LABEL: dan.kernel @fast attributes {target = #dan.target<"fast", L1 = 8, UB = 8, L0A = 8, L0B = 8, L0C = 8, peak = [UB], rate = 32.0, startup = 0>} {
dan.kernel @fast attributes {target = #dan.target<"fast", startup = 0, peak = [UB], rate = 32, L1 = 8, UB = 8, L0A = 8, L0B = 8, L0C = 8>} {
}

// CHECK-LABEL: dan.kernel @default {
// CHECK-NEXT:  }
dan.kernel @default {
}

// Test that a core with its own tiers and pipes (a second vector unit) prints the sets
// that differ from the defaults, and that its kernels use its names.

// CHECK-LABEL: dan.kernel @two_vectors attributes {target = #dan.target<"twovec", tiers = [L1, UB, L0A, L0B, L0C, UB2], l0 = [L0A, L0B, L0C], L1 = 4096, UB = 1024, L0A = 256, L0B = 256, L0C = 512, UB2 = 2048, peak = [L1, UB], pipes = [MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR, VECTOR2], dma = [MTE1, MTE2, MTE3, FIXP], spill_out = MTE3, spill_in = MTE2, rate = 0.5, startup = 150>} {
// CHECK-NEXT:    %b, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB2, 2048>
// CHECK-NEXT:    %t1 = dan.compute "EXP" on VECTOR2 cycles(4) bufs(%b) after(%t0) {id = 1}
// CHECK-NEXT:    %t2 = dan.free %b after(%t1) {id = 2}
// CHECK-NEXT:  }
dan.kernel @two_vectors attributes {target = #dan.target<"twovec", UB2 = 2048, tiers = [L1, UB, L0A, L0B, L0C, UB2], L1 = 4096, UB = 1024, L0A = 256, L0B = 256, L0C = 512, pipes = [MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR, VECTOR2]>} {
  %b, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB2, 2048>
  %t1 = dan.compute "EXP" on VECTOR2 cycles(4) bufs(%b) after(%t0) {id = 1}
  %t2 = dan.free %b after(%t1) {id = 2}
}
