// RUN: dan-opt %s --split-input-file -p test-print-timeline | filecheck %s
// RUN: dan-opt %s --split-input-file -p 'cpe{re-place=false}',test-print-timeline | filecheck %s --check-prefix=CPE
// RUN: xdsl-opt %s --split-input-file -p test-print-timeline | filecheck %s

// Test that each pipe lists its nodes in schedule order with the replay's start and
// finish, ALLOC and FREE left out. The long COPY_IN 2 holds MTE2 0-100, so the short
// COPY_IN 3 runs 100-110 and the EXP it feeds 110-210. CPE swaps the two loads:
// COPY_IN 3 0-10, EXP 10-110, COPY_IN 2 10-110; makespan 210 -> 110.

// CHECK-LABEL: // timeline @swap: makespan 210
// CHECK-NEXT:  // MTE2
// CHECK-NEXT:  //   COPY_IN 2 [0, 100)
// CHECK-NEXT:  //   COPY_IN 3 [100, 110)
// CHECK-NEXT:  // VECTOR
// CHECK-NEXT:  //   EXP 4 [110, 210)
// CPE-LABEL: // timeline @swap: makespan 110
// CPE-NEXT:  // MTE2
// CPE-NEXT:  //   COPY_IN 3 [0, 10)
// CPE-NEXT:  //   COPY_IN 2 [10, 110)
// CPE-NEXT:  // VECTOR
// CPE-NEXT:  //   EXP 4 [10, 110)

dan.kernel @swap {
  %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %y, %ty = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 64>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%x) after(%tx) {id = 2}
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%y) after(%ty) {id = 3}
  %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%t3) {id = 4}
  %t5 = dan.free %x after(%t2) {id = 5}
  %t6 = dan.free %y after(%t4) {id = 6}
}

// -----

// Test the spill costs on the timeline (MODEL.md). a (UB 100) comes from a COPY_IN, so
// DDR keeps a clean copy: SPILL_OUT 7 moves nothing (10-10 on MTE3). d (UB 50) is
// computed by EXP 3 (0-20), so SPILL_OUT 9 writes it back: 2 * 50 + 150 = 250 cycles,
// 20-270 on MTE3. SPILL_IN 8 puts a at [100, 200), d's old place: it waits for
// SPILL_OUT 9 and takes 2 * 100 + 150 cycles, 270-620 on MTE2. SPILL_IN 10 puts d at
// a's old place (free since 10) once MTE2 is free: 620-870. VADD 870-900. CPE finds
// nothing shorter: both reloads and VADD are chained.

// CHECK-LABEL: // timeline @spills: makespan 900
// CHECK-NEXT:  // MTE2
// CHECK-NEXT:  //   COPY_IN 1 [0, 10)
// CHECK-NEXT:  //   SPILL_IN 8 (buffer 0) [270, 620)
// CHECK-NEXT:  //   SPILL_IN 10 (buffer 1) [620, 870)
// CHECK-NEXT:  // MTE3
// CHECK-NEXT:  //   SPILL_OUT 7 (buffer 0) [10, 10)
// CHECK-NEXT:  //   SPILL_OUT 9 (buffer 1) [20, 270)
// CHECK-NEXT:  // VECTOR
// CHECK-NEXT:  //   EXP 3 [0, 20)
// CHECK-NEXT:  //   VADD 4 [870, 900)
// CPE-LABEL: // timeline @spills: makespan 900

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
