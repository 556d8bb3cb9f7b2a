// RUN: dan-opt %s --split-input-file -p mpas | filecheck %s --check-prefix=BAL
// RUN: dan-opt %s --split-input-file -p 'mpas{policy=memory-first}' | filecheck %s --check-prefix=MEM
// RUN: dan-opt %s --split-input-file -p 'mpas{policy=criticality-first}' | filecheck %s --check-prefix=CRIT
// RUN: dan-opt %s --split-input-file -p 'mpas{l0_rule=false}' | filecheck %s --check-prefix=NOL0

// Test that each policy orders three independent UB chains by its key.
// All ALLOCs are level 2; an EXP that becomes ready (level 1) runs before any ALLOC,
// and a FREE that becomes ready (level 0) before anything else.
// balanced: smallest delta (+32 for x and y, +64 for z), then largest h: y (h 100), x, z.
// memory-first: smallest delta, then id: x, y, z.
// criticality-first: largest h first: z (500), y (100), x (10).

// BAL-LABEL: dan.kernel @chains
// BAL: %b1, %t3 = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// BAL-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%b1) after(%t3) {id = 4}
// BAL-NEXT: %t5 = dan.free %b1 after(%t4) {id = 5}
// BAL-NEXT: %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// BAL-NEXT: %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%b0) after(%t0) {id = 1}
// BAL-NEXT: %t2 = dan.free %b0 after(%t1) {id = 2}
// BAL-NEXT: %b2, %t6 = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
// BAL-NEXT: %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%b2) after(%t6) {id = 7}
// BAL-NEXT: %t8 = dan.free %b2 after(%t7) {id = 8}
// MEM-LABEL: dan.kernel @chains
// MEM: %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// MEM-NEXT: %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%b0) after(%t0) {id = 1}
// MEM-NEXT: %t2 = dan.free %b0 after(%t1) {id = 2}
// MEM-NEXT: %b1, %t3 = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// MEM-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%b1) after(%t3) {id = 4}
// MEM-NEXT: %t5 = dan.free %b1 after(%t4) {id = 5}
// MEM-NEXT: %b2, %t6 = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
// MEM-NEXT: %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%b2) after(%t6) {id = 7}
// MEM-NEXT: %t8 = dan.free %b2 after(%t7) {id = 8}
// CRIT-LABEL: dan.kernel @chains
// CRIT: %b2, %t6 = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
// CRIT-NEXT: %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%b2) after(%t6) {id = 7}
// CRIT-NEXT: %t8 = dan.free %b2 after(%t7) {id = 8}
// CRIT-NEXT: %b1, %t3 = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// CRIT-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%b1) after(%t3) {id = 4}
// CRIT-NEXT: %t5 = dan.free %b1 after(%t4) {id = 5}
// CRIT-NEXT: %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// CRIT-NEXT: %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%b0) after(%t0) {id = 1}
// CRIT-NEXT: %t2 = dan.free %b0 after(%t1) {id = 2}
// NOL0-LABEL: dan.kernel @chains

dan.kernel @chains {
  %x, %tx = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%tx) {id = 1}
  %t2 = dan.free %x after(%t1) {id = 2}
  %y, %ty = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
  %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%ty) {id = 4}
  %t5 = dan.free %y after(%t4) {id = 5}
  %z, %tz = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
  %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%z) after(%tz) {id = 7}
  %t8 = dan.free %z after(%t7) {id = 8}
}

// -----

// Test the L0 rule. Without it the key allocates q (h 600) right after the L1 tile is
// loaded, while p (h 560) is still needed: two L0A buffers live at once. With it,
// MPAS admits p first (q's FREE needs MATMUL 9, which needs p: admitting q first could
// never finish), the L1 load waits for its L0 consumer, and q is allocated only after
// FREE p.

// BAL-LABEL: dan.kernel @l0
// BAL: %b1, %t2 = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
// BAL-NEXT: %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
// BAL-NEXT: %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b0) after(%t0) {id = 1}
// BAL-NEXT: %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b1, %b0) after(%t1, %t2) {id = 3}
// BAL-NEXT: %b3, %t7 = dan.alloc {id = 7, buf = 3} : !dan.buf<L0C, 256>
// BAL-NEXT: %t8 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%b3, %b1) after(%t3, %t7) {id = 8}
// BAL-NEXT: %t10 = dan.free %b1 after(%t8) {id = 10}
// BAL-NEXT: %b2, %t4 = dan.alloc {id = 4, buf = 2} : !dan.buf<L0A, 128>
// BAL-NEXT: %t5 = dan.dma "MOVE" on MTE1 cycles(100) bufs(%b2, %b0) after(%t1, %t4) {id = 5}
// BAL-NEXT: %t6 = dan.free %b0 after(%t3, %t5) {id = 6}
// BAL-NEXT: %t9 = dan.compute "MATMUL" on CUBE cycles(500) bufs(%b3, %b2) after(%t5, %t8) {id = 9}
// BAL-NEXT: %t11 = dan.free %b2 after(%t9) {id = 11}
// BAL-NEXT: %t12 = dan.free %b3 after(%t9) {id = 12}
// NOL0-LABEL: dan.kernel @l0
// NOL0: %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
// NOL0-NEXT: %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b0) after(%t0) {id = 1}
// NOL0-NEXT: %b2, %t4 = dan.alloc {id = 4, buf = 2} : !dan.buf<L0A, 128>
// NOL0-NEXT: %t5 = dan.dma "MOVE" on MTE1 cycles(100) bufs(%b2, %b0) after(%t1, %t4) {id = 5}
// NOL0-NEXT: %b1, %t2 = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
// NOL0-NEXT: %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b1, %b0) after(%t1, %t2) {id = 3}
// NOL0-NEXT: %t6 = dan.free %b0 after(%t3, %t5) {id = 6}
// NOL0-NEXT: %b3, %t7 = dan.alloc {id = 7, buf = 3} : !dan.buf<L0C, 256>
// NOL0-NEXT: %t8 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%b3, %b1) after(%t3, %t7) {id = 8}
// NOL0-NEXT: %t10 = dan.free %b1 after(%t8) {id = 10}
// NOL0-NEXT: %t9 = dan.compute "MATMUL" on CUBE cycles(500) bufs(%b3, %b2) after(%t5, %t8) {id = 9}
// NOL0-NEXT: %t11 = dan.free %b2 after(%t9) {id = 11}
// NOL0-NEXT: %t12 = dan.free %b3 after(%t9) {id = 12}

dan.kernel @l0 {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
  %p, %tp = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
  %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%p, %a) after(%t1, %tp) {id = 3}
  %q, %tq = dan.alloc {id = 4, buf = 2} : !dan.buf<L0A, 128>
  %t5 = dan.dma "MOVE" on MTE1 cycles(100) bufs(%q, %a) after(%t1, %tq) {id = 5}
  %t6 = dan.free %a after(%t3, %t5) {id = 6}
  %c, %tc = dan.alloc {id = 7, buf = 3} : !dan.buf<L0C, 256>
  %t8 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%c, %p) after(%t3, %tc) {id = 8}
  %t9 = dan.compute "MATMUL" on CUBE cycles(500) bufs(%c, %q) after(%t5, %t8) {id = 9}
  %t10 = dan.free %p after(%t8) {id = 10}
  %t11 = dan.free %q after(%t9) {id = 11}
  %t12 = dan.free %c after(%t9) {id = 12}
}
