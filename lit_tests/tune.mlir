// RUN: dan-opt %s -p tune,test-print-timeline | filecheck %s
// RUN: dan-opt %s -p 'tune{objective=peak},test-print-timeline' | filecheck %s --check-prefix=PEAK
// RUN: not dan-opt %s -p 'tune{objective=size}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that tune keeps the first candidate that is best by its objective. Three UB
// chains: x (32 units, load 10, EXP 10), y (32, load 100, EXP 100), z (64, load 10,
// EXP 500). Every MPAS order runs z alone (peak 64); DLR reuses addresses, so without
// prefetch each load waits for the FREE before it: balanced's y, x, z gives y 0-100,
// EXP y 100-200, x 200-210, EXP x 210-220, z 220-230, EXP z 230-730. Prefetch hoists
// x's load beside y (32 + 32 = 64: the peak stays), DLR puts x at 32, and x's load
// runs 100-110 right after y's; z at [0, 64) waits for FREE x (210): EXP z 220-720.
// Each policy gives 730 without prefetch and 720 with it, so the default objective
// (makespan first) keeps balanced with prefetch, the first 720.

// CHECK: // timeline @chains: makespan 720
// CHECK-NEXT: // MTE2
// CHECK-NEXT: //   COPY_IN 5 [0, 100)
// CHECK-NEXT: //   COPY_IN 1 [100, 110)
// CHECK-NEXT: //   COPY_IN 9 [210, 220)
// CHECK-NEXT: // VECTOR
// CHECK-NEXT: //   EXP 6 [100, 200)
// CHECK-NEXT: //   EXP 2 [200, 210)
// CHECK-NEXT: //   EXP 10 [220, 720)
// CHECK-LABEL: dan.kernel @chains
// CHECK-NEXT:    [[Y:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 4, buf = 1, offset = 0} : !dan.buf<UB, 32>
// CHECK-NEXT:    "COPY_IN" {{.*}} bufs([[Y]]) {{.*}} {id = 5}
// CHECK-NEXT:    [[X:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 0, buf = 0, offset = 32} : !dan.buf<UB, 32>
// CHECK-NEXT:    "COPY_IN" {{.*}} bufs([[X]]) {{.*}} {id = 1}
// CHECK-NEXT:    "EXP" {{.*}} bufs([[Y]]) {{.*}} {id = 6}
// CHECK-NEXT:    dan.free [[Y]] {{.*}} {id = 7}
// CHECK-NEXT:    "EXP" {{.*}} bufs([[X]]) {{.*}} {id = 2}
// CHECK-NEXT:    dan.free [[X]] {{.*}} {id = 3}
// CHECK-NEXT:    dan.alloc {id = 8, buf = 2, offset = 0} : !dan.buf<UB, 64>

// Test that with the peak alone as objective every candidate ties (64) and the first,
// balanced without prefetch, is kept: 730.

// PEAK: // timeline @chains: makespan 730
// PEAK-LABEL: dan.kernel @chains
// PEAK-NEXT:    dan.alloc {id = 4, buf = 1, offset = 0}
// PEAK-NEXT:    "COPY_IN" {{.*}} {id = 5}
// PEAK-NEXT:    "EXP" {{.*}} {id = 6}
// PEAK-NEXT:    dan.free {{.*}} {id = 7}
// PEAK-NEXT:    dan.alloc {id = 0, buf = 0, offset = 0}

// Test that an unknown metric is refused with the valid ones listed.
// BAD: dan-opt: error: {{.*}}'size'{{.*}}peak, traffic, spills, makespan

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
