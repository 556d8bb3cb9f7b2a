// RUN: dan-opt %s --split-input-file -p original | filecheck %s

// Test that `original` restores the input order (ascending node id, which respects
// every edge here) and drops the layout: CPE had moved the short COPY_IN 3 ahead of
// COPY_IN 2; the result lists ids 0 to 6 in turn, without offsets.

// CHECK-LABEL: dan.kernel @swapped
// CHECK-NEXT:    [[X:%[a-z0-9_]+]], [[TX:%[a-z0-9_]+]] = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 64>
// CHECK-NEXT:    [[Y:%[a-z0-9_]+]], [[TY:%[a-z0-9_]+]] = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 64>
// CHECK-NEXT:    [[T2:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(100) bufs([[X]]) after([[TX]]) {id = 2}
// CHECK-NEXT:    [[T3:%[a-z0-9_]+]] = dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[Y]]) after([[TY]]) {id = 3}
// CHECK-NEXT:    [[T4:%[a-z0-9_]+]] = dan.compute "EXP" on VECTOR cycles(100) bufs([[Y]]) after([[T3]]) {id = 4}
// CHECK-NEXT:    dan.free [[X]] after([[T2]]) {id = 5}
// CHECK-NEXT:    dan.free [[Y]] after([[T4]]) {id = 6}
// CHECK-NEXT:  }

dan.kernel @swapped {
  %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %y, %ty = dan.alloc {id = 1, buf = 1, offset = 64} : !dan.buf<UB, 64>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%y) after(%ty) {id = 3}
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%x) after(%tx) {id = 2}
  %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%t3) {id = 4}
  %t5 = dan.free %x after(%t2) {id = 5}
  %t6 = dan.free %y after(%t4) {id = 6}
}

// -----

// Test that when the id order breaks an edge (FREE 0 of buffer 0 comes before its
// ALLOC 1), `original` falls back to Kahn's order taking the smallest id first:
// ready {1, 3} -> ALLOC 1; {2, 3} -> COPY_IN 2; {0, 3} -> FREE 0; then ALLOC 3, FREE 4.

// CHECK-LABEL: dan.kernel @kahn
// CHECK-NEXT:    [[A:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 1, buf = 0} : !dan.buf<L1, 64>
// CHECK-NEXT:    dan.dma "COPY_IN" on MTE2 cycles(10) bufs([[A]]) {{.*}} {id = 2}
// CHECK-NEXT:    dan.free [[A]] {{.*}} {id = 0}
// CHECK-NEXT:    [[B:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// CHECK-NEXT:    dan.free [[B]] {{.*}} {id = 4}
// CHECK-NEXT:  }

dan.kernel @kahn {
  %b, %t3 = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
  %t4 = dan.free %b after(%t3) {id = 4}
  %a, %t1 = dan.alloc {id = 1, buf = 0} : !dan.buf<L1, 64>
  %t2 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%t1) {id = 2}
  %t0 = dan.free %a after(%t2, %t1) {id = 0}
}
