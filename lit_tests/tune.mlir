// RUN: dan-opt %s -p tune,test-print-timeline | filecheck %s
// RUN: dan-opt %s -p 'tune{objective=peak},test-print-timeline' | filecheck %s --check-prefix=PEAK
// RUN: not dan-opt %s -p 'tune{objective=size}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that tune keeps the first candidate that is best by its objective. Three UB
// chains: x (32 units, load 10, EXP 10), y (32, load 100, EXP 100), z (64, load 10,
// EXP 500). Every MPAS order runs z alone (peak 64). CPE's re-placement gives each
// load a range released earlier (or never used), so no load waits for a FREE and the
// makespan is set by the order on VECTOR: balanced, memory-first and
// balanced-locality run y, x, z (EXP z 210-710: 710); criticality-first runs z first,
// its 500-cycle EXP being the longest path (z 0-10, EXP z 10-510, EXP y 510-610,
// EXP x 610-620: 620), with or without prefetch. The default objective (makespan
// first) keeps criticality-first without prefetch, the first 620.

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
// CHECK-NEXT:    [[Z:%[a-z0-9_]+]], {{%[a-z0-9_]+}} = dan.alloc {id = 8, buf = 2, offset = 0} : !dan.buf<UB, 64>
// CHECK-NEXT:    "COPY_IN" {{.*}} bufs([[Z]]) {{.*}} {id = 9}
// CHECK-NEXT:    "EXP" {{.*}} bufs([[Z]]) {{.*}} {id = 10}
// CHECK-NEXT:    dan.free [[Z]] {{.*}} {id = 11}
// CHECK-NEXT:    dan.alloc {id = 4, buf = 1, offset = 64} : !dan.buf<UB, 32>

// Test that with the peak alone as objective every candidate ties (64) and the first,
// balanced without prefetch, is kept: 710.

// PEAK: // timeline @chains: makespan 710
// PEAK-LABEL: dan.kernel @chains
// PEAK-NEXT:    dan.alloc {id = 4, buf = 1, offset = 0}
// PEAK-NEXT:    "COPY_IN" {{.*}} {id = 5}
// PEAK-NEXT:    "EXP" {{.*}} {id = 6}
// PEAK-NEXT:    dan.free {{.*}} {id = 7}
// PEAK-NEXT:    dan.alloc {id = 0, buf = 0, offset = 32}

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
