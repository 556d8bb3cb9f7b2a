// RUN: dan-opt %s -p 'cpe{passes=0 re-place=false block-reach=1}' | filecheck %s
// RUN: dan-opt %s -p 'cpe{passes=0 re-place=false block-reach=0}' | filecheck %s --check-prefix=NONE
// RUN: dan-opt %s -p 'cpe,verify-plan' | dan-replay - | filecheck %s --check-prefix=TIME
// RUN: not dan-opt %s -p 'cpe{block-reach=-1}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that CPE's block hoist moves a block of work that uses no input (ALLOC, MMAD,
// FREE of L0A buffer 11) before the block ahead of it: in order it runs 210-310
// while MTE2 idles (200-320), holding the one L0A range that the MOVE of the next
// block waits for, whose FREE of a lets c load. Hoisted, it runs 0-100 and c loads at
// 220 instead of 320: makespan 730 -> 630. The loads, the blocks that read them and
// every offset stay.

// CHECK-LABEL: dan.kernel @hoist
// CHECK-NEXT: dan.alloc {id = 8, buf = 11, offset = 0} : !dan.buf<L0A, 256>
// CHECK-NEXT: dan.compute "MMAD" on CUBE cycles(100)
// CHECK-NEXT: dan.free %b11
// CHECK-NEXT: dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 2048>
// NONE-LABEL: dan.kernel @hoist
// NONE-NEXT: dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 2048>
// TIME: kernel hoist: valid
// TIME: makespan: 630
// BAD: dan-opt: error: bad pass pipeline 'cpe{block-reach=-1}': option 'block-reach' of pass 'cpe': must be >= 0, got -1

dan.kernel @hoist attributes {target = #dan.target<contest>} {
  %b0, %t0 = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 2048>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b0) after(%t0) {id = 1}
  %b1, %t2 = dan.alloc {id = 2, buf = 1, offset = 2048} : !dan.buf<L1, 2048>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b1) after(%t2) {id = 3}
  %b10, %t4 = dan.alloc {id = 4, buf = 10, offset = 0} : !dan.buf<L0A, 256>
  %t5 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b10, %b0) after(%t1, %t4) {id = 5}
  %t6 = dan.compute "MMAD" on CUBE cycles(100) bufs(%b10) after(%t5) {id = 6}
  %t7 = dan.free %b10 after(%t6) {id = 7}
  %b11, %t8 = dan.alloc {id = 8, buf = 11, offset = 0} : !dan.buf<L0A, 256>
  %t9 = dan.compute "MMAD" on CUBE cycles(100) bufs(%b11) after(%t8) {id = 9}
  %t10 = dan.free %b11 after(%t9) {id = 10}
  %b12, %t11 = dan.alloc {id = 11, buf = 12, offset = 0} : !dan.buf<L0A, 256>
  %t12 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b12, %b0) after(%t1, %t11) {id = 12}
  %t13 = dan.free %b0 after(%t12, %t5) {id = 13}
  %t14 = dan.compute "MMAD" on CUBE cycles(100) bufs(%b12) after(%t12) {id = 14}
  %t15 = dan.free %b12 after(%t14) {id = 15}
  %b2, %t16 = dan.alloc {id = 16, buf = 2, offset = 0} : !dan.buf<L1, 2048>
  %t17 = dan.dma "COPY_IN" on MTE2 cycles(300) bufs(%b2) after(%t16) {id = 17}
  %b13, %t18 = dan.alloc {id = 18, buf = 13, offset = 0} : !dan.buf<L0A, 256>
  %t19 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b13, %b2) after(%t17, %t18) {id = 19}
  %t20 = dan.free %b2 after(%t19) {id = 20}
  %t21 = dan.compute "MMAD" on CUBE cycles(100) bufs(%b13) after(%t19) {id = 21}
  %t22 = dan.free %b13 after(%t21) {id = 22}
  %t23 = dan.free %b1 after(%t3) {id = 23}
}
