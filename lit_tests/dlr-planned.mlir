// RUN: dan-opt %s -p 'dlr{policy=planned},verify-plan' | filecheck %s --check-prefix=PLAN
// RUN: dan-opt %s -p 'dlr{policy=planned plan-effort=0.0},verify-plan' | filecheck %s --check-prefix=NEXT

// Test that the planned policy evicts by the up-front plan. UB holds 4 units: a (3,
// written by X, so a reload moves 6) and b (1, loaded by COPY_IN, a reload moves 1) fill
// it when c (1) arrives. Next-use eviction (plan-effort=0.0) spills a, needed last; the
// exact plan spills b, whose reload is six times cheaper, right after its COPY_IN, and
// reloads it into its packed range before its next use.

// PLAN-LABEL: dan.kernel @sizes
// PLAN: %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 3>
// PLAN: %b, %tb = dan.alloc {id = 2, buf = 1, offset = 3} : !dan.buf<UB, 1>
// PLAN-NEXT: %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb, %t1) {id = 3}
// PLAN-NEXT: %t11 = dan.spill_out %b after(%tb, %t3) {id = 11}
// PLAN-NEXT: %c, %tc = dan.alloc {id = 4, buf = 2, offset = 3} : !dan.buf<UB, 1>
// PLAN: %b_1, %t12 = dan.spill_in %b after(%t11) {id = 12, offset = 3}
// PLAN-NEXT: %t7 = dan.compute "X" on VECTOR cycles(10) bufs(%b_1) after(%t3, %t6) {id = 7}
// PLAN-NOT: dan.spill_out

// NEXT-LABEL: dan.kernel @sizes
// NEXT: %t11 = dan.spill_out %a after(%ta, %t1) {id = 11}
// NEXT: %a_1, %t12 = dan.spill_in %a after(%t11) {id = 12, offset = 0}
// NEXT-NOT: dan.spill_out

dan.kernel @sizes attributes {target = #dan.target<"tiny", L1 = 4096, UB = 4, L0A = 256, L0B = 256, L0C = 512>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 3>
  %t1 = dan.compute "X" on VECTOR cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<UB, 1>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb, %t1) {id = 3}
  %c, %tc = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 1>
  %t5 = dan.compute "X" on VECTOR cycles(10) bufs(%c) after(%tc, %t3) {id = 5}
  %t6 = dan.free %c after(%t5) {id = 6}
  %t7 = dan.compute "X" on VECTOR cycles(10) bufs(%b) after(%t3, %t6) {id = 7}
  %t8 = dan.compute "X" on VECTOR cycles(10) bufs(%a) after(%t1, %t7) {id = 8}
  %t9 = dan.free %a after(%t8) {id = 9}
  %t10 = dan.free %b after(%t7, %t9) {id = 10}
}
