// RUN: dan-opt %s --split-input-file -p hmcos | filecheck %s
// RUN: dan-opt %s --split-input-file -p 'hmcos{beam=1 rounds=1}' | filecheck %s
// RUN: dan-opt %s --split-input-file -p hmcos | dan-replay - | filecheck %s --check-prefix=PEAK
// RUN: not dan-opt %s -p 'hmcos{beam=0}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that HMCOS schedules groups and sequences by lowest peak. ADD a, b -> c
// (a, b: UB 30, c: UB 50) then COPY_OUT c; aside, d (UB 100) in and out.
// Sequences [COPY_IN a], [COPY_IN b], [ADD, COPY_OUT c], [COPY_IN d, COPY_OUT d]; ADD
// is a join, so a, b and the ADD sequence form a group (internal peak 110). The first
// step keeps the d-sequence (peak 100) ahead of the group (110); both end at 110,
// and the tie goes to the better parent: d first. A beam of one and a single round
// keep that same best partial schedule. Peak 110; the id order's is 150.

// CHECK-LABEL: dan.kernel @groups
// CHECK-NEXT:    [[D:%[a-z0-9_]+]], [[TD:%[a-z0-9_]+]] = dan.alloc {id = 8, buf = 3} : !dan.buf<UB, 100>
// CHECK-NEXT:    [[T9:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[D]]) after([[TD]]) {id = 9}
// CHECK-NEXT:    [[T10:%[a-z0-9_]+]] = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs([[D]]) after([[T9]]) {id = 10}
// CHECK-NEXT:    dan.free [[D]] after([[T10]], [[TD]]) {id = 11}
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], [[TA:%[a-z0-9_]+]] = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 30>
// CHECK-NEXT:    [[T1:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[A]]) after([[TA]]) {id = 1}
// CHECK-NEXT:    [[B:%[a-z0-9_]+]], [[TB:%[a-z0-9_]+]] = dan.alloc {id = 2, buf = 1} : !dan.buf<UB, 30>
// CHECK-NEXT:    [[T3:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[B]]) after([[TB]]) {id = 3}
// CHECK-NEXT:    [[C:%[a-z0-9_]+]], [[TC:%[a-z0-9_]+]] = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 50>
// CHECK-NEXT:    [[T5:%[a-z0-9_]+]] = dan.compute "ADD" on VECTOR cycles(10) bufs([[A]], [[B]], [[C]]) after([[T1]], [[T3]], [[TC]]) {id = 5}
// CHECK-NEXT:    dan.free [[A]] after([[TA]], [[T5]]) {id = 6}
// CHECK-NEXT:    dan.free [[B]] after([[TB]], [[T5]]) {id = 7}
// CHECK-NEXT:    [[T12:%[a-z0-9_]+]] = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs([[C]]) after([[T5]]) {id = 12}
// CHECK-NEXT:    dan.free [[C]] after([[T12]], [[TC]]) {id = 13}
// CHECK-NEXT:  }
// PEAK: kernel groups: valid
// PEAK: peak L1+UB: 110

// Test that a beam below one is refused, naming the option.
// BAD: dan-opt: error: bad pass pipeline 'hmcos{beam=0}': {{.*}}beam{{.*}}0

dan.kernel @groups {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 30>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<UB, 30>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 3}
  %c, %tc = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 50>
  %t5 = dan.compute "ADD" on VECTOR cycles(10) bufs(%a, %b, %c) after(%t1, %t3, %tc) {id = 5}
  %t6 = dan.free %a after(%ta, %t5) {id = 6}
  %t7 = dan.free %b after(%tb, %t5) {id = 7}
  %d, %td = dan.alloc {id = 8, buf = 3} : !dan.buf<UB, 100>
  %t9 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%d) after(%td) {id = 9}
  %t10 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%d) after(%t9) {id = 10}
  %t11 = dan.free %d after(%t10, %td) {id = 11}
  %t12 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%c) after(%t5) {id = 12}
  %t13 = dan.free %c after(%t12, %tc) {id = 13}
}
