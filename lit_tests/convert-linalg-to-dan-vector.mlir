// RUN: xdsl-opt %s -p convert-linalg-to-dan | filecheck %s
// RUN: dan-opt %s -p convert-linalg-to-dan | filecheck %s

// Test that elementwise ops and reductions lower to one vector kernel each, in UB:
// per tile the inputs' ALLOCs and COPY_INs (MTE2), each body step on VECTOR into a
// fresh tile, the COPY_OUT (MTE3); a reducing linalg.generic runs its body (EXP), then
// ROWSUM and COMPACT to the row statistic it copies out. Cycles are the flash family's
// vector model scaled to the 64-byte tiles.

// CHECK:      dan.kernel @ew_vector0 attributes {target = #dan.target<contest>} {
// CHECK-NEXT:   %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 64>
// CHECK-NEXT:   %b1, %t1 = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 64>
// CHECK-NEXT:   %t2 = dan.dma "COPY_IN" on MTE2 cycles(197) bufs(%b0) after(%t0) {id = 2}
// CHECK-NEXT:   %t3 = dan.dma "COPY_IN" on MTE2 cycles(197) bufs(%b1) after(%t1) {id = 3}
// CHECK-NEXT:   %b2, %t4 = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 64>
// CHECK-NEXT:   %t5 = dan.compute "ADD" on VECTOR cycles(18) bufs(%b2, %b0, %b1) after(%t2, %t3, %t4) {id = 5}
// CHECK-NEXT:   %t6 = dan.dma "COPY_OUT" on MTE3 cycles(159) bufs(%b2) after(%t5) {id = 6}
// CHECK:      dan.kernel @ew_vector1 attributes {target = #dan.target<contest>} {
// CHECK:        dan.compute "EXP" on VECTOR cycles(109)
// CHECK:        dan.compute "ROWSUM" on VECTOR cycles(171)
// CHECK-NEXT:   dan.alloc {id = 6, buf = 3} : !dan.buf<UB, 8>
// CHECK-NEXT:   dan.alloc {id = 7, buf = 4} : !dan.buf<UB, 8>
// CHECK-NEXT:   dan.compute "COMPACT" on VECTOR cycles(56)
// CHECK-NEXT:   dan.dma "COPY_OUT" on MTE3 cycles(131)
// CHECK:      func.func @ew
// CHECK-NEXT:   dan.launch @ew_vector0(%a, %b, %b) {lowered = "linalg.add"}
// CHECK-NEXT:   dan.launch @ew_vector1(%b, %s) {lowered = "linalg.generic"}

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @ew(%a: memref<4x8xf16>, %b: memref<4x8xf16>, %s: memref<4xf16>) {
  linalg.add ins(%a, %b : memref<4x8xf16>, memref<4x8xf16>) outs(%b : memref<4x8xf16>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<4x8xf16>) outs(%s : memref<4xf16>) {
    ^bb0(%x: f16, %acc: f16):
      %e = math.exp %x : f16
      %r = arith.addf %e, %acc : f16
      linalg.yield %r : f16
  }
  return
}
