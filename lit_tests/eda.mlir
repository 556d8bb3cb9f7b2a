// RUN: dan-opt %s --split-input-file -p eda | filecheck %s

// Test that EDA walks depth first from the lowest source: ALLOC 0, its COPY_IN 2 and
// FREE 4 before the second chain starts (the id order interleaves the two chains).

// CHECK-LABEL: dan.kernel @chains
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], [[TA:%[a-z0-9_]+]] = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    [[T2:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[A]]) after([[TA]]) {id = 2}
// CHECK-NEXT:    dan.free [[A]] after([[T2]], [[TA]]) {id = 4}
// CHECK-NEXT:    [[B:%[a-z0-9_]+]], [[TB:%[a-z0-9_]+]] = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 100>
// CHECK-NEXT:    [[T3:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[B]]) after([[TB]]) {id = 3}
// CHECK-NEXT:    dan.free [[B]] after([[T3]], [[TB]]) {id = 5}
// CHECK-NEXT:  }

dan.kernel @chains {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 100>
  %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 100>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 2}
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 3}
  %t4 = dan.free %a after(%t2, %ta) {id = 4}
  %t5 = dan.free %b after(%t3, %tb) {id = 5}
}

// -----

// Test that with room to spare the walk is LIFO: a (L1 200) is loaded and read
// twice, and the newest ready node, ALLOC d (id 3, after the first reader 2), goes
// before the older reader 6: the id order 0 to 7.

// CHECK-LABEL: dan.kernel @roomy
// CHECK-NEXT:    dan.alloc {id = 0, buf = 0}
// CHECK-NEXT:    "COPY_IN" {{.*}} {id = 1}
// CHECK-NEXT:    "COPY_OUT" {{.*}} {id = 2}
// CHECK-NEXT:    dan.alloc {{.*}} {id = 3, buf = 1}
// CHECK-NEXT:    "COPY_IN" {{.*}} {id = 4}
// CHECK-NEXT:    dan.free {{.*}} {id = 5}
// CHECK-NEXT:    "COPY_OUT" {{.*}} {id = 6}
// CHECK-NEXT:    dan.free {{.*}} {id = 7}
// CHECK-NEXT:  }

dan.kernel @roomy {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 200>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %t2 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%a) after(%t1) {id = 2}
  %d, %td = dan.alloc after(%t2) {id = 3, buf = 1} : !dan.buf<L1, 200>
  %t4 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%d) after(%td) {id = 4}
  %t5 = dan.free %d after(%t4, %td) {id = 5}
  %t6 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%a) after(%t1) {id = 6}
  %t7 = dan.free %a after(%t2, %t6, %ta) {id = 7}
}

// -----

// Test that a group closes when it would overflow: the same kernel on a core with
// L1 250 and UB 50 (L1 + UB = 300). With a (200) live, ALLOC d would reach 400, so the
// open work is flushed first: reader 6 and FREE a, then d's chain.

// CHECK-LABEL: dan.kernel @tight
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 0, buf = 0}
// CHECK-NEXT:    "COPY_IN" {{.*}} {id = 1}
// CHECK-NEXT:    "COPY_OUT" {{.*}} {id = 2}
// CHECK-NEXT:    "COPY_OUT" {{.*}} bufs([[A]]) {{.*}} {id = 6}
// CHECK-NEXT:    dan.free [[A]] {{.*}} {id = 7}
// CHECK-NEXT:    [[D:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {{.*}} {id = 3, buf = 1}
// CHECK-NEXT:    "COPY_IN" {{.*}} bufs([[D]]) {{.*}} {id = 4}
// CHECK-NEXT:    dan.free [[D]] {{.*}} {id = 5}
// CHECK-NEXT:  }

dan.kernel @tight attributes {target = #dan.target<"tight", L1 = 250, UB = 50, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 200>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %t2 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%a) after(%t1) {id = 2}
  %d, %td = dan.alloc after(%t2) {id = 3, buf = 1} : !dan.buf<L1, 200>
  %t4 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%d) after(%td) {id = 4}
  %t5 = dan.free %d after(%t4, %td) {id = 5}
  %t6 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%a) after(%t1) {id = 6}
  %t7 = dan.free %a after(%t2, %t6, %ta) {id = 7}
}
