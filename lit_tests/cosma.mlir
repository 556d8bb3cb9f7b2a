// RUN: dan-opt %s --split-input-file -p cosma | filecheck %s
// RUN: dan-opt %s --split-input-file -p cosma | dan-replay - | filecheck %s --check-prefix=COST

// Test that COSMA's order takes the smallest residency change first and that its
// allocation is best fit. Two loads (L1 100), each read by an EXP into UB 50, then
// written out. After load a (+100), the first EXP (+50 - 100) beats load b (+100),
// then COPY_OUT x (-50); only then load b. Every buffer fits at offset 0 in turn:
// peak 150, the id order's 250.

// CHECK-LABEL: dan.kernel @residency
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[A]]) {{.*}} {id = 1}
// CHECK-NEXT:    [[X:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 4, buf = 2, offset = 0} : !dan.buf<UB, 50>
// CHECK-NEXT:    dan.compute "EXP" on VECTOR cycles(10) bufs([[A]], [[X]]) {{.*}} {id = 5}
// CHECK-NEXT:    dan.free [[A]] {{.*}} {id = 6}
// CHECK-NEXT:    dan.dma "COPY_OUT" on MTE3 cycles(10) bufs([[X]]) {{.*}} {id = 10}
// CHECK-NEXT:    dan.free [[X]] {{.*}} {id = 11}
// CHECK-NEXT:    [[B:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 2, buf = 1, offset = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[B]]) {{.*}} {id = 3}
// CHECK-NEXT:    [[Y:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 7, buf = 3, offset = 0} : !dan.buf<UB, 50>
// CHECK-NEXT:    dan.compute "EXP" on VECTOR cycles(10) bufs([[B]], [[Y]]) {{.*}} {id = 8}
// CHECK-NEXT:    dan.free [[B]] {{.*}} {id = 9}
// CHECK-NEXT:    dan.dma "COPY_OUT" on MTE3 cycles(10) bufs([[Y]]) {{.*}} {id = 12}
// CHECK-NEXT:    dan.free [[Y]] {{.*}} {id = 13}
// CHECK-NEXT:  }
// COST: kernel residency: valid
// COST-NEXT: peak L1+UB: 150
// COST: spills: 0

dan.kernel @residency {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 100>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<L1, 100>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 3}
  %x, %tx = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 50>
  %t5 = dan.compute "EXP" on VECTOR cycles(10) bufs(%a, %x) after(%t1, %tx) {id = 5}
  %t6 = dan.free %a after(%t5, %ta) {id = 6}
  %y, %ty = dan.alloc {id = 7, buf = 3} : !dan.buf<UB, 50>
  %t8 = dan.compute "EXP" on VECTOR cycles(10) bufs(%b, %y) after(%t3, %ty) {id = 8}
  %t9 = dan.free %b after(%t8, %tb) {id = 9}
  %t10 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%x) after(%t5) {id = 10}
  %t11 = dan.free %x after(%t10, %tx) {id = 11}
  %t12 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%y) after(%t8) {id = 12}
  %t13 = dan.free %y after(%t12, %ty) {id = 13}
}

// -----

// Test that COSMA evicts the buffer used furthest ahead and brings it back. L1 holds
// 200: a and b (100 each) are loaded and added into o; c is loaded for MUL b, c; SUB
// reads a. ALLOC c finds L1 full: a (next use SUB 11) goes before b (next use MUL 8),
// as spill 0 with ids 15 (out) and 16 (in); c takes a's place at 0, and a comes back
// at 0 right before SUB, once b and c are freed. a came from a COPY_IN: its SPILL_OUT
// moves nothing, the reload 100 units.

// CHECK-LABEL: dan.kernel @evict
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], [[TA:%[a-z0-9_]+]] = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    [[T1:%[a-z0-9_]+]] = dan.dma "COPY_IN" {{.*}} {id = 1}
// CHECK-NEXT:    [[B:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 2, buf = 1, offset = 100} : !dan.buf<L1, 100>
// CHECK-NEXT:    dan.dma "COPY_IN" {{.*}} {id = 3}
// CHECK-NEXT:    [[O:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 4, buf = 2, offset = 0} : !dan.buf<UB, 10>
// CHECK-NEXT:    [[T5:%[a-z0-9_]+]] = dan.compute "ADD" {{.*}} {id = 5}
// CHECK-NEXT:    [[OUT:%[a-z0-9_]+]] = dan.spill_out [[A]] after([[TA]], [[T1]], [[T5]]) {id = 15}
// CHECK-NEXT:    [[C:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 6, buf = 3, offset = 0} : !dan.buf<L1, 100>
// CHECK-NEXT:    dan.dma "COPY_IN" {{.*}} bufs([[C]]) {{.*}} {id = 7}
// CHECK-NEXT:    dan.compute "MUL" {{.*}} bufs([[B]], [[C]], [[O]]) {{.*}} {id = 8}
// CHECK-NEXT:    dan.free [[B]] {{.*}} {id = 9}
// CHECK-NEXT:    dan.free [[C]] {{.*}} {id = 10}
// CHECK-NEXT:    [[A2:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.spill_in [[A]] after([[OUT]]) {id = 16, offset = 0}
// CHECK-NEXT:    dan.compute "SUB" {{.*}} bufs([[A2]], [[O]]) {{.*}} {id = 11}
// CHECK-NEXT:    dan.free [[A2]] {{.*}} {id = 12}
// CHECK-NEXT:    dan.dma "COPY_OUT" {{.*}} {id = 13}
// CHECK-NEXT:    dan.free [[O]] {{.*}} {id = 14}
// CHECK-NEXT:  }
// COST: kernel evict: valid
// COST: spills: 1
// COST-NEXT: extra traffic: 100

dan.kernel @evict attributes {target = #dan.target<"small", L1 = 200, UB = 64, L0A = 256, L0B = 256, L0C = 512>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 100>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<L1, 100>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 3}
  %o, %to = dan.alloc {id = 4, buf = 2} : !dan.buf<UB, 10>
  %t5 = dan.compute "ADD" on VECTOR cycles(10) bufs(%a, %b, %o) after(%t1, %t3, %to) {id = 5}
  %c, %tc = dan.alloc {id = 6, buf = 3} : !dan.buf<L1, 100>
  %t7 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%c) after(%tc) {id = 7}
  %t8 = dan.compute "MUL" on VECTOR cycles(10) bufs(%b, %c, %o) after(%t5, %t3, %t7) {id = 8}
  %t9 = dan.free %b after(%t8, %tb, %t5) {id = 9}
  %t10 = dan.free %c after(%t8, %tc) {id = 10}
  %t11 = dan.compute "SUB" on VECTOR cycles(10) bufs(%a, %o) after(%t8, %t1) {id = 11}
  %t12 = dan.free %a after(%t11, %ta, %t5) {id = 12}
  %t13 = dan.dma "COPY_OUT" on MTE3 cycles(10) bufs(%o) after(%t11) {id = 13}
  %t14 = dan.free %o after(%t13, %to) {id = 14}
}
