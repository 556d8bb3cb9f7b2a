// RUN: not dan-opt %s --split-input-file -p verify-plan | filecheck %s
// RUN: not dan-opt %s --split-input-file --verify-plan 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// Test that a valid plan passes and the kernel is left exactly as written (value names
// included): in an L1 of
// 200 units, a at [0, 100) and b at [100, 200) touch at 100 and end at the capacity.

// CHECK-LABEL: dan.kernel @fits
// CHECK-NEXT:    %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    %b, %tb = dan.alloc {id = 1, buf = 1, offset = 100} : !dan.buf<L1, 100>
// CHECK-NEXT:    %t2 = dan.compute "MATMUL" on CUBE cycles(20) bufs(%a, %b) after(%ta, %tb) {id = 2}
// CHECK-NEXT:    %t3 = dan.free %a after(%t2) {id = 3}
// CHECK-NEXT:    %t4 = dan.free %b after(%t2) {id = 4}
// CHECK-NEXT:  }

dan.kernel @fits attributes {target = #dan.target<"small", L1 = 200, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 100} : !dan.buf<L1, 100>
  %t2 = dan.compute "MATMUL" on CUBE cycles(20) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %t4 = dan.free %b after(%t2) {id = 4}
}

// -----

// Test that a 1-unit overlap is found: b at [99, 199) reaches into a's [0, 100).

// CHECK: // error: {{.*}}kernel @overlap: invalid plan (overlap): ALLOC 1: buffer 1 at [99, 199) overlaps buffer 0 at [0, 100) in L1
// ERR: dan-opt: error: chunk 2: {{.*}}kernel @overlap: invalid plan (overlap): ALLOC 1: buffer 1 at [99, 199) overlaps buffer 0 at [0, 100) in L1

dan.kernel @overlap attributes {target = #dan.target<"small", L1 = 200, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 99} : !dan.buf<L1, 100>
  %t2 = dan.compute "MATMUL" on CUBE cycles(20) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %t4 = dan.free %b after(%t2) {id = 4}
}

// -----

// Test that a placement 1 unit past the tier is found: b at [101, 201) in 200 units.

// CHECK: // error: {{.*}}kernel @past: invalid plan (out-of-bounds): ALLOC 1: buffer 1 at [101, 201) outside L1 capacity 200
// ERR: dan-opt: error: chunk 3: {{.*}}kernel @past: invalid plan (out-of-bounds)

dan.kernel @past attributes {target = #dan.target<"small", L1 = 200, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 101} : !dan.buf<L1, 100>
  %t2 = dan.compute "MATMUL" on CUBE cycles(20) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %t4 = dan.free %b after(%t2) {id = 4}
}

// -----

// Test that a reload placed over a resident buffer is found: b was spilled, a took
// its place at 0, and b comes back at 0 while a is still there.

// CHECK: // error: {{.*}}kernel @reload: invalid plan (overlap): SPILL_IN 6 (buffer 1): buffer 1 at [0, 100) overlaps buffer 0 at [0, 100) in L1
// ERR: dan-opt: error: chunk 4: {{.*}}kernel @reload: invalid plan (overlap)

dan.kernel @reload attributes {target = #dan.target<"small", L1 = 200, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 0} : !dan.buf<L1, 100>
  %out = dan.spill_out %b after(%tb) {id = 5}
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
  %b2, %in = dan.spill_in %b after(%out) {id = 6, offset = 0}
  %t2 = dan.compute "MATMUL" on CUBE cycles(20) bufs(%a, %b2) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %t4 = dan.free %b2 after(%t2) {id = 4}
}
