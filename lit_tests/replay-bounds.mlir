// RUN: dan-replay %s | filecheck %s
// RUN: dan-opt %s -p dlr | dan-replay - --json | filecheck %s --check-prefix=JSON

// Test that each metric is printed beside its best lower bound and the ratio, then the
// bounds' parts and each tier's packing. Two chains MTE2 -> CUBE -> VECTOR and
// MTE1 -> CUBE -> VECTOR of 5 cycles: CUBE cannot start before 5, carries 10 cycles
// and a VECTOR node of 5 follows its last node, so no plan beats 20 (critical path 15,
// busiest pipe 10); this one reaches it.

// CHECK-LABEL: kernel window: valid
// CHECK-NEXT:    peak L1+UB:    800  (bound 500, ratio 1.600, gap 37.5%)
// CHECK-NEXT:    tier peaks:    L1 0, UB 800, L0A 0, L0B 0, L0C 0
// CHECK-NEXT:    L0 rule:       kept
// CHECK-NEXT:    spills:        0  (bound 0, ratio 1.000, gap 0.0%)
// CHECK-NEXT:    extra traffic: 0  (bound 0, ratio 1.000, gap 0.0%)
// CHECK-NEXT:    makespan:      20  (bound 20, ratio 1.000, gap 0.0%)
// CHECK-NEXT:    busiest pipe:  CUBE 10 with this plan's spills (makespan / it 2.000)
// CHECK-NEXT:    bounds:        peak: footprint 500, forced live 500; makespan: CUBE 10, critical path 15, pipe window 20, with forced spills 0
// CHECK-NEXT:    packing:       L1 0/4096, UB 800/1024, L0A 0/256, L0B 0/256, L0C 0/512 (most bytes resident at once/capacity)
// CHECK-NEXT:    conflict-free: yes

// JSON: "kernel": "window"
// JSON-SAME: "packing": {"conflict_free": true, "tiers": {{.*}}"UB": {"capacity": 1024, "max_live": 800}}}

dan.kernel @window attributes {target = #dan.target<contest>} {
  %b0, %t0 = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 300>
  %b1, %t1 = dan.alloc {id = 1, buf = 1, offset = 300} : !dan.buf<UB, 500>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(5) bufs(%b0) after(%t0) {id = 2}
  %t5 = dan.dma "COPY_IN" on MTE1 cycles(5) bufs(%b1) after(%t1) {id = 5}
  %t3 = dan.compute "MM" on CUBE cycles(5) bufs(%b0) after(%t2, %t0) {id = 3}
  %t6 = dan.compute "MM" on CUBE cycles(5) bufs(%b1) after(%t5, %t1) {id = 6}
  %t4 = dan.compute "V" on VECTOR cycles(5) bufs(%b0) after(%t3, %t0) {id = 4}
  %t7 = dan.compute "V" on VECTOR cycles(5) bufs(%b1) after(%t6, %t1) {id = 7}
  %t8 = dan.free %b0 after(%t2, %t3, %t4) {id = 8}
  %t9 = dan.free %b1 after(%t5, %t6, %t7) {id = 9}
}

// Test that bytes forced live across a node that does not touch them count, and the
// spill they force above capacity: a (200, clean) is used before and after the op on
// b (400) in a UB of 400, so a leaves once (traffic 200) in every plan with a layout.
// Its reload (550 cycles) then runs on MTE2 after the COPY_IN (10): makespan >= 560.
// Order only (first RUN), capacity binds nothing: no spill bound.

// CHECK-LABEL: kernel forced: valid
// CHECK-NEXT:    peak L1+UB:    600  (bound 600, ratio 1.000, gap 0.0%)
// CHECK:         spills:        0  (bound 0, ratio 1.000, gap 0.0%)
// CHECK:         bounds:        peak: footprint 400, forced live 600;
// CHECK-NOT:     conflict-free

// JSON: "bounds": {"extra_traffic": {"bound": 200, "gap": 0.0, "ratio": 1.0}
// JSON-SAME: "makespan": {"bound": 560, "busiest_pipe": "MTE2", "capacity_window": 560,
// JSON-SAME: "kernel": "forced"
// JSON-SAME: "packing": {"conflict_free": true, "tiers": {{.*}}"UB": {"capacity": 400, "max_live": 400}}}
// JSON-SAME: "spill_count": 1

dan.kernel @forced attributes {target = #dan.target<"ub400", L1 = 4096, UB = 400, L0A = 256, L0B = 256, L0C = 512>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 200>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<UB, 400>
  %t3 = dan.compute "OP" on VECTOR cycles(5) bufs(%b) after(%tb, %t1) {id = 3}
  %t4 = dan.free %b after(%t3) {id = 4}
  %t5 = dan.compute "OP" on VECTOR cycles(5) bufs(%a) after(%t3) {id = 5}
  %t6 = dan.free %a after(%t1, %t5) {id = 6}
}
