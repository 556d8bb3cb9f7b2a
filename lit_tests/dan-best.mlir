// RUN: dan-opt %s -p 'dan-best{jobs=1},test-print-timeline' | filecheck %s
// RUN: dan-opt %s -p 'dan-best{jobs=2},test-print-timeline' | filecheck %s
// RUN: dan-opt %s --pipeline dan-best-peak -p test-print-timeline | filecheck %s --check-prefix=PEAK
// RUN: not dan-opt %s -p 'dan-best{objective=speed}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that dan-best finds the order that runs the longest chain first, whatever the
// number of workers. Three UB chains: x (32 units, load 10, EXP 10), y (32, load 100,
// EXP 100), z (64, load 10, EXP 500). The criticality-first order runs z's chain
// first; prefetch then loads y and x beside each other (32 + 32 = 64: the peak stays)
// while EXP z runs, so VECTOR is busy from 10 to the end: 10 + 500 + 100 + 10 = 620.

// CHECK: // timeline @chains: makespan 620
// CHECK-NEXT: // MTE2
// CHECK-NEXT: //   COPY_IN 9 [0, 10)
// CHECK-NEXT: //   COPY_IN 5 [10, 110)
// CHECK-NEXT: //   COPY_IN 1 [110, 120)
// CHECK-NEXT: // VECTOR
// CHECK-NEXT: //   EXP 10 [10, 510)
// CHECK-NEXT: //   EXP 6 [510, 610)
// CHECK-NEXT: //   EXP 2 [610, 620)
// CHECK-LABEL: dan.kernel @chains
// CHECK-NEXT:    dan.alloc {id = 8, buf = 2, offset = 0} : !dan.buf<UB, 64>

// Test that the peak objective, by name, keeps the smallest order-only peak (64, z's
// buffer alone) and, among the plans with it, the least traffic, then makespan.

// PEAK: // timeline @chains: makespan 620
// PEAK-LABEL: dan.kernel @chains

// Test that an unknown objective is refused with the valid ones listed.
// BAD: dan-opt: error: {{.*}}option 'objective' of pass 'dan-best': unknown value 'speed' (valid: peak, traffic, makespan)

dan.kernel @chains {
  %x, %tx = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%x) after(%tx) {id = 1}
  %t2 = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%t1) {id = 2}
  %t3 = dan.free %x after(%t2) {id = 3}
  %y, %ty = dan.alloc {id = 4, buf = 1} : !dan.buf<UB, 32>
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%y) after(%ty) {id = 5}
  %t6 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%t5) {id = 6}
  %t7 = dan.free %y after(%t6) {id = 7}
  %z, %tz = dan.alloc {id = 8, buf = 2} : !dan.buf<UB, 64>
  %t9 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%z) after(%tz) {id = 9}
  %t10 = dan.compute "EXP" on VECTOR cycles(500) bufs(%z) after(%t9) {id = 10}
  %t11 = dan.free %z after(%t10) {id = 11}
}
