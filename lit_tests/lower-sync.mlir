// RUN: dan-opt %s --split-input-file -p test-print-timeline,lower-sync,test-print-sync | filecheck %s --check-prefix=SUM
// RUN: dan-opt %s --split-input-file -p lower-sync | filecheck %s
// RUN: dan-opt %s --split-input-file -p 'lower-sync{event-ids=1}',test-print-sync | filecheck %s --check-prefix=ONE
// RUN: dan-opt %s --split-input-file -p lower-sync | dan-opt --split-input-file -p 'test-print-sync{sync-cost=1}' | filecheck %s --check-prefix=COST
// RUN: xdsl-opt %s --split-input-file -p lower-sync | filecheck %s --check-prefix=XDSL

// Test that each cross-pipe dependency becomes a set/wait pair, and that those implied
// by other flags and a pipe's order are dropped: ADD 6 needs COPY_IN 1, but MOVE 3
// waited for it and EXP 5 for MOVE 3. COPY_IN 8 reuses buffer 0's L1 place, so it
// waits for MOVE 3 through FREE 4 and ALLOC 7 (folded: no pipe, no time). Accesses
// carry tier and range; with sync cost 0 the streams replay to the plan's makespan.
// With one event id per pipe pair nothing changes here; a sync cost of 1 cycle per set
// and per wait delays the chain by 4 cycles.

// SUM-LABEL: // timeline @chain: makespan 55
// SUM:       // sync @chain: makespan 55, flags 3, barriers 0
// SUM-NEXT:  //   MTE1 -> MTE2: peak outstanding 1, ids used 1
// SUM-NEXT:  //   MTE1 -> VECTOR: peak outstanding 1, ids used 1
// SUM-NEXT:  //   MTE2 -> MTE1: peak outstanding 1, ids used 1
// CHECK-LABEL: dan_sync.program @chain event_ids(8) attributes {target = #dan.target<contest>} {
// CHECK-NEXT:    dan_sync.stream "MTE1" {
// CHECK-NEXT:      dan_sync.wait_flag MTE2 -> MTE1 event [[LOAD:[0-9]+]]
// CHECK-NEXT:      dan_sync.exec "MOVE" id 3 cycles 5 (L1[0, 64) buf 0, UB[0, 64) buf 1)
// CHECK-NEXT:      dan_sync.set_flag MTE1 -> VECTOR event [[MOVED:[0-9]+]]
// CHECK-NEXT:      dan_sync.set_flag MTE1 -> MTE2 event [[FREED:[0-9]+]]
// CHECK-NEXT:    }
// CHECK-NEXT:    dan_sync.stream "MTE2" {
// CHECK-NEXT:      dan_sync.exec "COPY_IN" id 1 cycles 10 (L1[0, 64) buf 0)
// CHECK-NEXT:      dan_sync.set_flag MTE2 -> MTE1 event [[LOAD]]
// CHECK-NEXT:      dan_sync.wait_flag MTE1 -> MTE2 event [[FREED]]
// CHECK-NEXT:      dan_sync.exec "COPY_IN" id 8 cycles 10 (L1[0, 64) buf 2)
// CHECK-NEXT:    }
// CHECK-NEXT:    dan_sync.stream "VECTOR" {
// CHECK-NEXT:      dan_sync.wait_flag MTE1 -> VECTOR event [[MOVED]]
// CHECK-NEXT:      dan_sync.exec "EXP" id 5 cycles 20 (UB[0, 64) buf 1)
// CHECK-NEXT:      dan_sync.exec "ADD" id 6 cycles 20 (UB[0, 64) buf 1)
// CHECK-NEXT:    }
// CHECK-NEXT:  }

// ONE-LABEL: // sync @chain: makespan 55, flags 3, barriers 0
// COST-LABEL: // sync @chain: makespan 59, flags 3, barriers 0
// XDSL: dan_sync.program @chain event_ids(8)

dan.kernel @chain {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 64>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1, offset = 0} : !dan.buf<UB, 64>
  %t3 = dan.dma "MOVE" on MTE1 cycles(5) bufs(%a, %b) after(%t1, %tb) {id = 3}
  %t4 = dan.free %a after(%t3) {id = 4}
  %t5 = dan.compute "EXP" on VECTOR cycles(20) bufs(%b) after(%t3) {id = 5}
  %t6 = dan.compute "ADD" on VECTOR cycles(20) bufs(%b) after(%t5, %t1) {id = 6}
  %c, %tc = dan.alloc after(%t4) {id = 7, buf = 2, offset = 0} : !dan.buf<L1, 64>
  %t8 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%c) after(%tc) {id = 8}
  %t9 = dan.free %c after(%t8) {id = 9}
  %t10 = dan.free %b after(%t6) {id = 10}
}

// -----

// Test the event-id limit. Three loads run ahead of their three EXPs. With eight ids
// each EXP waits for its own load. With one id, EXP 7's flag cannot take id 0 before
// VECTOR has passed its first wait: VECTOR signals back right after that wait, and the
// set moves to the end of MTE2 (after COPY_IN 5) behind a wait for that signal, which
// covers EXP 8 too. No dependency is dropped and here no cycle is lost. A sync cost of
// 1 cycle per set and per wait adds 4 cycles (a set on MTE2, then a wait before each EXP).

// SUM-LABEL: // timeline @three: makespan 100
// SUM:       // sync @three: makespan 100, flags 3, barriers 0
// SUM-NEXT:  //   MTE2 -> VECTOR: peak outstanding 2, ids used 3

// ONE-LABEL:   // sync @three: makespan 100, flags 3, barriers 0
// ONE-NEXT:    //   MTE2 -> VECTOR: peak outstanding 1, ids used 1
// ONE-NEXT:    //   VECTOR -> MTE2: peak outstanding 1, ids used 1
// ONE-LABEL:   dan_sync.program @three event_ids(1)
// ONE-NEXT:    dan_sync.stream "MTE2" {
// ONE-NEXT:      dan_sync.exec "COPY_IN" id 3 cycles 10 (UB[0, 64) buf 0)
// ONE-NEXT:      dan_sync.set_flag MTE2 -> VECTOR event 0
// ONE-NEXT:      dan_sync.exec "COPY_IN" id 4 cycles 10 (UB[64, 128) buf 1)
// ONE-NEXT:      dan_sync.exec "COPY_IN" id 5 cycles 10 (UB[128, 192) buf 2)
// ONE-NEXT:      dan_sync.wait_flag VECTOR -> MTE2 event 0
// ONE-NEXT:      dan_sync.set_flag MTE2 -> VECTOR event 0
// ONE-NEXT:    }
// ONE-NEXT:    dan_sync.stream "VECTOR" {
// ONE-NEXT:      dan_sync.wait_flag MTE2 -> VECTOR event 0
// ONE-NEXT:      dan_sync.set_flag VECTOR -> MTE2 event 0
// ONE-NEXT:      dan_sync.exec "EXP" id 6 cycles 30 (UB[0, 64) buf 0)
// ONE-NEXT:      dan_sync.wait_flag MTE2 -> VECTOR event 0
// ONE-NEXT:      dan_sync.exec "EXP" id 7 cycles 30 (UB[64, 128) buf 1)
// ONE-NEXT:      dan_sync.exec "EXP" id 8 cycles 30 (UB[128, 192) buf 2)
// ONE-NEXT:    }

// COST-LABEL: // sync @three: makespan 104, flags 3, barriers 0

dan.kernel @three {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 64>
  %c, %tc = dan.alloc {id = 2, buf = 2, offset = 128} : !dan.buf<UB, 64>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 3}
  %t4 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 4}
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%c) after(%tc) {id = 5}
  %t6 = dan.compute "EXP" on VECTOR cycles(30) bufs(%a) after(%t3) {id = 6}
  %t7 = dan.compute "EXP" on VECTOR cycles(30) bufs(%b) after(%t4) {id = 7}
  %t8 = dan.compute "EXP" on VECTOR cycles(30) bufs(%c) after(%t5) {id = 8}
  %t9 = dan.free %a after(%t6) {id = 9}
  %t10 = dan.free %b after(%t7) {id = 10}
  %t11 = dan.free %c after(%t8) {id = 11}
}

// -----

// Test a spill: buffer a leaves UB (SPILL_OUT 7 on MTE3, free: a came from a COPY_IN)
// and comes back at a new offset (SPILL_IN 8 on MTE2); the accesses after it carry the
// new range, and the spill edges become flags like any other dependency. EXP 3's
// buffer takes a's old range, so it waits for the SPILL_OUT (an address-reuse edge).

// SUM-LABEL: // timeline @spill
// SUM-SAME:  : makespan [[SPAN:[0-9]+]]
// SUM:       // sync @spill: makespan [[SPAN]], flags
// CHECK-LABEL: dan_sync.program @spill
// CHECK-NEXT:    dan_sync.stream "MTE2" {
// CHECK-NEXT:      dan_sync.exec "COPY_IN" id 2 cycles 10 (UB[0, 100) buf 0)
// CHECK-NEXT:      dan_sync.set_flag MTE2 -> MTE3 event [[LOADED:[0-9]+]]
// CHECK-NEXT:      dan_sync.wait_flag MTE3 -> MTE2 event [[OUT:[0-9]+]]
// CHECK-NEXT:      dan_sync.exec "SPILL_IN" id 8 cycles 350 (UB[100, 200) buf 0)
// CHECK-NEXT:      dan_sync.set_flag MTE2 -> VECTOR event [[BACK:[0-9]+]]
// CHECK-NEXT:    }
// CHECK-NEXT:    dan_sync.stream "MTE3" {
// CHECK-NEXT:      dan_sync.wait_flag MTE2 -> MTE3 event [[LOADED]]
// CHECK-NEXT:      dan_sync.exec "SPILL_OUT" id 7 cycles 0 (UB[0, 100) buf 0)
// CHECK-NEXT:      dan_sync.set_flag MTE3 -> VECTOR event [[ROOM:[0-9]+]]
// CHECK-NEXT:      dan_sync.set_flag MTE3 -> MTE2 event [[OUT]]
// CHECK-NEXT:    }
// CHECK-NEXT:    dan_sync.stream "VECTOR" {
// CHECK-NEXT:      dan_sync.wait_flag MTE3 -> VECTOR event [[ROOM]]
// CHECK-NEXT:      dan_sync.exec "EXP" id 3 cycles 20 (UB[0, 100) buf 1)
// CHECK-NEXT:      dan_sync.wait_flag MTE2 -> VECTOR event [[BACK]]
// CHECK-NEXT:      dan_sync.exec "VADD" id 4 cycles 30 (UB[100, 200) buf 0, UB[0, 100) buf 1)
// CHECK-NEXT:    }

dan.kernel @spill attributes {target = #dan.target<"small", L1 = 4096, UB = 200, L0A = 256, L0B = 256, L0C = 512>} {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 100>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 2}
  %a_out = dan.spill_out %a after(%t2) {id = 7}
  %d, %td = dan.alloc {id = 1, buf = 1, offset = 0} : !dan.buf<UB, 100>
  %t3 = dan.compute "EXP" on VECTOR cycles(20) bufs(%d) after(%td) {id = 3}
  %a2, %ta2 = dan.spill_in %a after(%a_out) {id = 8, offset = 100}
  %t4 = dan.compute "VADD" on VECTOR cycles(30) bufs(%a2, %d) after(%t2, %t3) {id = 4}
  %t5 = dan.free %a2 after(%t4) {id = 5}
  %t6 = dan.free %d after(%t4) {id = 6}
}
