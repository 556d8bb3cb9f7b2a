// RUN: xdsl-opt %s --split-input-file -p convert-linalg-to-dan | filecheck %s
// RUN: dan-opt %s --split-input-file -p convert-linalg-to-dan | filecheck %s

// Test that a run of vector ops over one space fuses into one kernel in UB: per tile
// the inputs' ALLOCs and COPY_INs (MTE2), each step on VECTOR into a fresh tile (the
// reducing linalg.generic reads the add's result from UB, runs its body's EXP, then
// ROWSUM and COMPACT to a row statistic), and the COPY_OUTs (MTE3) of what leaves the
// run: %b, written by the add (a function argument), and the row sums. Cycles are the
// flash family's vector model scaled to the 64-byte tiles. A row too wide for a tile
// (300 f16) is reduced in chunks whose statistics combine (MAX on the row statistic).

// CHECK:      dan.kernel @ew_vector0 attributes {target = #dan.target<contest>} {
// CHECK-NEXT:   %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 64>
// CHECK-NEXT:   %b1, %t1 = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 64>
// CHECK-NEXT:   %t2 = dan.dma "COPY_IN" on MTE2 cycles(197) bufs(%b0) after(%t0) {id = 2}
// CHECK-NEXT:   %t3 = dan.dma "COPY_IN" on MTE2 cycles(197) bufs(%b1) after(%t1) {id = 3}
// CHECK-NEXT:   %b2, %t4 = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 64>
// CHECK-NEXT:   %t5 = dan.compute "ADD" on VECTOR cycles(18) bufs(%b2, %b0, %b1) after(%t2, %t3, %t4) {id = 5}
// CHECK-NEXT:   %b3, %t6 = dan.alloc {id = 6, buf = 3} : !dan.buf<UB, 64>
// CHECK-NEXT:   %t7 = dan.compute "EXP" on VECTOR cycles(109) bufs(%b3, %b2) after(%t5, %t6) {id = 7}
// CHECK-NEXT:   %b4, %t8 = dan.alloc {id = 8, buf = 4} : !dan.buf<UB, 64>
// CHECK-NEXT:   %t9 = dan.compute "ROWSUM" on VECTOR cycles(171) bufs(%b4, %b3) after(%t7, %t8) {id = 9}
// CHECK-NEXT:   %b5, %t10 = dan.alloc {id = 10, buf = 5} : !dan.buf<UB, 8>
// CHECK-NEXT:   %b6, %t11 = dan.alloc {id = 11, buf = 6} : !dan.buf<UB, 8>
// CHECK-NEXT:   %t12 = dan.compute "COMPACT" on VECTOR cycles(56) bufs(%b5, %b4, %b6) after(%t9, %t10, %t11) {id = 12}
// CHECK-NEXT:   %t13 = dan.dma "COPY_OUT" on MTE3 cycles(159) bufs(%b2) after(%t5) {id = 13}
// CHECK-NEXT:   %t14 = dan.dma "COPY_OUT" on MTE3 cycles(131) bufs(%b5) after(%t12) {id = 14}
// CHECK:      func.func @ew
// CHECK-NEXT:   dan.launch @ew_vector0(%a, %b, %s) {lowered = "linalg.add+linalg.generic"}

// CHECK:      dan.kernel @wide_vector0
// CHECK-NEXT:   dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 128>
// CHECK-NEXT:   dan.dma "COPY_IN" on MTE2 cycles(325)
// CHECK-NEXT:   dan.alloc {id = 2, buf = 1} : !dan.buf<UB, 128>
// CHECK-NEXT:   dan.compute "ROWMAX" on VECTOR cycles(310)
// CHECK:        dan.compute "COMPACT" on VECTOR cycles(113)
// CHECK:        dan.compute "ROWMAX" on VECTOR cycles(310)
// CHECK:        dan.compute "COMPACT" on VECTOR cycles(113)
// CHECK-NEXT:   dan.alloc {id = 14, buf = 8} : !dan.buf<UB, 2>
// CHECK-NEXT:   dan.compute "MAX" on VECTOR cycles(23) bufs(%b8, %b2, %b6)
// CHECK:      dan.launch @wide_vector0(%a, %m) {lowered = "linalg.reduce"}

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

// -----

func.func @wide(%a: memref<2x300xf16>, %m: memref<2xf16>) {
  linalg.reduce ins(%a : memref<2x300xf16>) outs(%m : memref<2xf16>) dimensions = [1]
    (%x: f16, %acc: f16) {
      %r = arith.maximumf %x, %acc : f16
      linalg.yield %r : f16
    }
  return
}
