// RUN: dan-opt %s --split-input-file -p magis | filecheck %s
// RUN: dan-opt %s --split-input-file -p magis | dan-replay - | filecheck %s --check-prefix=PEAK

// Test that MAGIS sinks each load to its use, then hoists a load while the peak allows.
// Loads a and b (L1 100 each); MUL a -> c (UB 100); ADD b, c -> c; COPY_OUT c.
// The traversal from the sources (index order) gives 2 3 0 1 4 5 6 7 8 9 10 (FREEs
// right after their last predecessor, ALLOCs right before their first use), peak 300.
// Sinking the loads before their first use: 4 0 1 5 6 2 3 7 8 9 10, peak 200, the
// limit. Load a is hoisted above ALLOC c (footprint 100 there); load b cannot pass
// FREE a: the footprint before it is 200, and 200 + 100 would raise the peak.
// Result: 0 1 4 5 6 2 3 7 8 9 10; the id order had peak 300.

// CHECK-LABEL: dan.kernel @loads
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], [[TA:%[a-z0-9_]+]] = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    [[T1:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[A]]) after([[TA]]) {id = 1}
// CHECK-NEXT:    [[C:%[a-z0-9_]+]], [[TC:%[a-z0-9_]+]] = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 100>
// CHECK-NEXT:    [[T5:%[a-z0-9_]+]] = dan.compute "MUL" on VECTOR cycles(10) bufs([[A]], [[C]]) after([[T1]], [[TC]]) {id = 5}
// CHECK-NEXT:    dan.free [[A]] {{.*}} {id = 6}
// CHECK-NEXT:    [[B:%[a-z0-9_]+]], [[TB:%[a-z0-9_]+]] = dan.alloc {id = 2, buf = 1} : !dan.buf<L1, 100>
// CHECK-NEXT:    [[T3:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[B]]) after([[TB]]) {id = 3}
// CHECK-NEXT:    [[T7:%[a-z0-9_]+]] = dan.compute "ADD" on VECTOR cycles(10) bufs([[B]], [[C]]) after([[T3]], [[T5]]) {id = 7}
// CHECK-NEXT:    dan.free [[B]] {{.*}} {id = 8}
// CHECK-NEXT:    [[T9:%[a-z0-9_]+]] = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs([[C]]) after([[T7]]) {id = 9}
// CHECK-NEXT:    dan.free [[C]] {{.*}} {id = 10}
// CHECK-NEXT:  }
// PEAK: kernel loads: valid
// PEAK: peak L1+UB: 200

dan.kernel @loads {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 100>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<L1, 100>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 3}
  %c, %tc = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 100>
  %t5 = dan.compute "MUL" on VECTOR cycles(10) bufs(%a, %c) after(%t1, %tc) {id = 5}
  %t6 = dan.free %a after(%t5, %ta) {id = 6}
  %t7 = dan.compute "ADD" on VECTOR cycles(10) bufs(%b, %c) after(%t3, %t5) {id = 7}
  %t8 = dan.free %b after(%t7, %tb) {id = 8}
  %t9 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%c) after(%t7) {id = 9}
  %t10 = dan.free %c after(%t9, %tc) {id = 10}
}
