// RUN: dan-opt %s -p prefetch | filecheck %s --check-prefix=KEEP
// RUN: dan-opt %s -p 'prefetch{peak_slack=32}' | filecheck %s --check-prefix=HOIST
// RUN: dan-opt %s -p 'prefetch,dlr' | dan-replay - | filecheck %s --check-prefix=KEEP-TIME
// RUN: dan-opt %s -p 'prefetch{peak_slack=32},dlr' | dan-replay - | filecheck %s --check-prefix=HOIST-TIME
// RUN: not dan-opt %s -p 'prefetch{cover=-1.0}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that prefetch never raises the order's peak: b's load could only start earlier
// while a is live (peak 32 -> 64), so by default nothing moves, and DLR then puts b at
// a's address: COPY_IN b waits for FREE a (makespan 1200).
// KEEP-LABEL: dan.kernel @loads
// KEEP-NEXT:    %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// KEEP-NEXT:    %t1 = dan.dma "COPY_IN"
// KEEP-NEXT:    %t2 = dan.compute "EXP"
// KEEP-NEXT:    %t3 = dan.free %a
// KEEP-NEXT:    %b, %tb = dan.alloc {id = 4, buf = 1} : !dan.buf<UB, 32>
// KEEP-TIME: peak L1+UB: 32
// KEEP-TIME: makespan: 1200

// Test that with 32 units of slack the load (ALLOC b and its COPY_IN) moves ahead of
// EXP a, and the second EXP no longer waits for the reload of a's space (1100).
// HOIST-LABEL: dan.kernel @loads
// HOIST-NEXT:    %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// HOIST-NEXT:    %t1 = dan.dma "COPY_IN"
// HOIST-NEXT:    %b, %tb = dan.alloc {id = 4, buf = 1} : !dan.buf<UB, 32>
// HOIST-NEXT:    %t5 = dan.dma "COPY_IN"
// HOIST-NEXT:    %t2 = dan.compute "EXP"
// HOIST-TIME: peak L1+UB: 64
// HOIST-TIME: makespan: 1100

// Test that a bad option is a diagnostic naming it.
// BAD: dan-opt: error: bad pass pipeline 'prefetch{cover=-1.0}': option 'cover' of pass 'prefetch': must be >= 0, got -1.0

dan.kernel @loads {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
  %t2 = dan.compute "EXP" on VECTOR cycles(500) bufs(%a) after(%t1) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %b, %tb = dan.alloc {id = 4, buf = 1} : !dan.buf<UB, 32>
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b) after(%tb) {id = 5}
  %t6 = dan.compute "EXP" on VECTOR cycles(500) bufs(%b) after(%t5, %t2) {id = 6}
  %t7 = dan.free %b after(%t6) {id = 7}
}
