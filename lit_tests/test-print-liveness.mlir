// RUN: dan-opt %s --split-input-file -p test-print-liveness | filecheck %s
// RUN: dan-opt %s --split-input-file -p dlr,test-print-liveness | filecheck %s --check-prefix=DLR
// RUN: xdsl-opt %s --split-input-file -p test-print-liveness | filecheck %s

// Test that each buffer's live range is [placement, release) in schedule positions,
// listed per tier with the tier's peak. Positions: 0 ALLOC a, 1 ALLOC b, 2 VADD,
// 3 FREE a, 4 ALLOC c, 5 COPY_IN c, 6 FREE b, 7 FREE c. UB holds a and b together
// from position 1 to 2: peak 32 + 64 = 96 at 1. Without a layout no offsets are shown.
// DLR then places them best fit in the empty tiers: a at 0, b right after it at 32,
// c at 0 of L1; the ranges stay.

// CHECK-LABEL: // liveness @overlap: ranges [placement, release) in schedule positions
// CHECK-NEXT:  // L1 capacity 4096: peak 128 at position 4
// CHECK-NEXT:  //   buffer 2 (128 units): [4, 7){{$}}
// CHECK-NEXT:  // UB capacity 1024: peak 96 at position 1
// CHECK-NEXT:  //   buffer 0 (32 units): [0, 3){{$}}
// CHECK-NEXT:  //   buffer 1 (64 units): [1, 6){{$}}
// DLR-LABEL: // liveness @overlap
// DLR-NEXT:  // L1 capacity 4096: peak 128 at position 4
// DLR-NEXT:  //   buffer 2 (128 units): [4, 7) offset 0
// DLR-NEXT:  // UB capacity 1024: peak 96 at position 1
// DLR-NEXT:  //   buffer 0 (32 units): [0, 3) offset 0
// DLR-NEXT:  //   buffer 1 (64 units): [1, 6) offset 32

dan.kernel @overlap {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 64>
  %t2 = dan.compute "VADD" on VECTOR cycles(10) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %c, %tc = dan.alloc {id = 4, buf = 2} : !dan.buf<L1, 128>
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%c) after(%tc) {id = 5}
  %t6 = dan.free %b after(%t2) {id = 6}
  %t7 = dan.free %c after(%t5) {id = 7}
}

// -----

// Test that a spilled buffer has one range per residency, each at its own offset,
// and that a tier's residency drops while a buffer is spilled out. a (UB 100) lives
// [0, 4) at 0 until SPILL_OUT 7 and [6, 9) at 100 from SPILL_IN 8 to FREE 5; d (UB 50)
// lives [2, 5) at 100 until SPILL_OUT 9 and [7, 10) at 0 from SPILL_IN 10 to FREE 6.
// UB holds 150 at positions 2-3 and 7-8, 50 at 4, nothing at 5: peak 150, first at 2.

// CHECK-LABEL: // liveness @spills
// CHECK-NEXT:  // UB capacity 1024: peak 150 at position 2
// CHECK-NEXT:  //   buffer 0 (100 units): [0, 4) offset 0; [6, 9) offset 100
// CHECK-NEXT:  //   buffer 1 (50 units): [2, 5) offset 100; [7, 10) offset 0
// CHECK-NOT:   // L1
// DLR-LABEL: // liveness @spills

dan.kernel @spills {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 100>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %d, %td = dan.alloc {id = 2, buf = 1, offset = 100} : !dan.buf<UB, 50>
  %t3 = dan.compute "EXP" on VECTOR cycles(20) bufs(%d) after(%td) {id = 3}
  %oa = dan.spill_out %a after(%ta, %t1) {id = 7}
  %od = dan.spill_out %d after(%td, %t3) {id = 9}
  %a2, %ia = dan.spill_in %a after(%oa) {id = 8, offset = 100}
  %d2, %id = dan.spill_in %d after(%od) {id = 10, offset = 0}
  %t4 = dan.compute "VADD" on VECTOR cycles(30) bufs(%a2, %d2) after(%t1, %t3, %ia, %id) {id = 4}
  %t5 = dan.free %a2 after(%t4) {id = 5}
  %t6 = dan.free %d2 after(%t4) {id = 6}
}
