// RUN: dan-opt %s --split-input-file -p 'cpe{move-events=false}' | filecheck %s
// RUN: dan-opt %s --split-input-file -p 'cpe{passes=0}' | filecheck %s --check-prefix=NONE
// RUN: dan-opt %s --split-input-file -p 'cpe{move-events=false},verify-plan' | dan-replay - | filecheck %s --check-prefix=TIME
// RUN: dan-opt %s --split-input-file -p 'cpe,verify-plan' | dan-replay - | filecheck %s --check-prefix=EVENTS

// Test that CPE (move-events=false) swaps two COPY_INs on MTE2 when the short one
// feeds the critical chain: COPY_IN x 0-100, COPY_IN y 100-110, EXP 110-210 (makespan 210) becomes
// COPY_IN y 0-10, EXP 10-110, COPY_IN x 10-110 (makespan 110). ALLOCs and FREEs stay.
// With no sweeps (passes=0) the kernel is left exactly as written.

// CHECK-LABEL: dan.kernel @swap
// CHECK: %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
// CHECK-NEXT: %y, %ty = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 64>
// CHECK-NEXT: %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%y) after(%ty) {id = 3}
// CHECK-NEXT: %t2 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%x) after(%tx) {id = 2}
// CHECK-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%t3) {id = 4}
// CHECK-NEXT: %t5 = dan.free %x after(%t2) {id = 5}
// CHECK-NEXT: %t6 = dan.free %y after(%t4) {id = 6}
// NONE-LABEL: dan.kernel @swap
// NONE-NEXT: %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
// NONE-NEXT: %y, %ty = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 64>
// NONE-NEXT: %t2 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%x) after(%tx) {id = 2}
// NONE-NEXT: %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%y) after(%ty) {id = 3}
// NONE-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%t3) {id = 4}
// NONE-NEXT: %t5 = dan.free %x after(%t2) {id = 5}
// NONE-NEXT: %t6 = dan.free %y after(%t4) {id = 6}
// TIME: kernel swap: valid
// TIME: makespan: 110
// EVENTS: kernel swap: valid
// EVENTS: makespan: 110

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

// Test that CPE with move-events=false keeps every event in place: ALLOC y sits
// between the two COPY_INs, so y's load cannot take x's slot and the order (makespan
// 210) stays. By default the ALLOC moves along with its load (no lifetime grows): 110.

// CHECK-LABEL: dan.kernel @pinned
// TIME: kernel pinned: valid
// TIME: makespan: 210
// EVENTS: kernel pinned: valid
// EVENTS: makespan: 110

dan.kernel @pinned {
  %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%x) after(%tx) {id = 2}
  %y, %ty = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 64>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%y) after(%ty) {id = 3}
  %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%t3) {id = 4}
  %t5 = dan.free %x after(%t2) {id = 5}
  %t6 = dan.free %y after(%t4) {id = 6}
}
