// RUN: dan-opt %s -p cpe | filecheck %s
// RUN: dan-opt %s -p 'cpe{re-place=false}' | filecheck %s --check-prefix=KEEP
// RUN: dan-opt %s -p cpe,verify-plan | dan-replay - | filecheck %s --check-prefix=TIME

// Test that CPE gives a placement an address range released earlier: b reuses a's
// bytes [0, 64) and so waits for FREE a (after EXP a, 110); [64, 128) is free while b
// lives, so COPY_IN b runs at 10-20 instead of 110-120 and the makespan drops from
// 220 to 210. The order, the lifetimes and the peak stay; only b's offset changes.
// With re-place=false nothing can move (each load is pinned by its buffer's events
// and the VECTOR queue), and the kernel is left as written.

// CHECK-LABEL: dan.kernel @reuse
// CHECK: dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
// CHECK: dan.alloc {id = 4, buf = 1, offset = 64} : !dan.buf<UB, 64>
// KEEP-LABEL: dan.kernel @reuse
// KEEP: dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
// KEEP: dan.alloc {id = 4, buf = 1, offset = 0} : !dan.buf<UB, 64>
// TIME: kernel reuse: valid
// TIME: peak L1+UB: 64
// TIME: makespan: 210

dan.kernel @reuse {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %t2 = dan.compute "EXP" on VECTOR cycles(100) bufs(%a) after(%t1) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %b, %tb = dan.alloc {id = 4, buf = 1, offset = 0} : !dan.buf<UB, 64>
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b) after(%tb) {id = 5}
  %t6 = dan.compute "EXP" on VECTOR cycles(100) bufs(%b) after(%t5) {id = 6}
  %t7 = dan.free %b after(%t6) {id = 7}
}
