// RUN: dan-opt %s --split-input-file -p mpas | filecheck %s --check-prefix=BAL
// RUN: dan-opt %s --split-input-file -p 'mpas{policy=memory-first}' | filecheck %s --check-prefix=MEM
// RUN: dan-opt %s --split-input-file -p 'mpas{policy=criticality-first}' | filecheck %s --check-prefix=CRIT
// RUN: dan-opt %s --split-input-file -p 'mpas{l0_rule=false}' | filecheck %s --check-prefix=NOL0
// RUN: dan-opt %s --split-input-file -p 'mpas{policy=balanced-locality}' | filecheck %s --check-prefix=LOC

// Test that each policy orders three independent UB chains by its key.
// All ALLOCs are level 2; an EXP that becomes ready (level 1) runs before any ALLOC,
// and a FREE that becomes ready (level 0) before anything else.
// balanced: smallest delta (+32 for x and y, +64 for z), then largest h: y (h 100), x, z.
// memory-first: smallest delta, then id: x, y, z.
// criticality-first: largest h first: z (500), y (100), x (10).

// BAL-LABEL: dan.kernel @chains
// BAL: %y, %ty = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// BAL-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%ty) {id = 4}
// BAL-NEXT: %t5 = dan.free %y after(%t4) {id = 5}
// BAL-NEXT: %x, %tx = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// BAL-NEXT: %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%tx) {id = 1}
// BAL-NEXT: %t2 = dan.free %x after(%t1) {id = 2}
// BAL-NEXT: %z, %tz = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
// BAL-NEXT: %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%z) after(%tz) {id = 7}
// BAL-NEXT: %t8 = dan.free %z after(%t7) {id = 8}
// MEM-LABEL: dan.kernel @chains
// MEM: %x, %tx = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// MEM-NEXT: %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%tx) {id = 1}
// MEM-NEXT: %t2 = dan.free %x after(%t1) {id = 2}
// MEM-NEXT: %y, %ty = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// MEM-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%ty) {id = 4}
// MEM-NEXT: %t5 = dan.free %y after(%t4) {id = 5}
// MEM-NEXT: %z, %tz = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
// MEM-NEXT: %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%z) after(%tz) {id = 7}
// MEM-NEXT: %t8 = dan.free %z after(%t7) {id = 8}
// CRIT-LABEL: dan.kernel @chains
// CRIT: %z, %tz = dan.alloc {id = 6, buf = 2} : !dan.buf<UB, 64>
// CRIT-NEXT: %t7 = dan.compute "EXP" on VECTOR cycles(500) bufs(%z) after(%tz) {id = 7}
// CRIT-NEXT: %t8 = dan.free %z after(%t7) {id = 8}
// CRIT-NEXT: %y, %ty = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
// CRIT-NEXT: %t4 = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%ty) {id = 4}
// CRIT-NEXT: %t5 = dan.free %y after(%t4) {id = 5}
// CRIT-NEXT: %x, %tx = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
// CRIT-NEXT: %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%tx) {id = 1}
// CRIT-NEXT: %t2 = dan.free %x after(%t1) {id = 2}
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
// BAL: %p, %tp = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
// BAL-NEXT: %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
// BAL-NEXT: %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
// BAL-NEXT: %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%p, %a) after(%t1, %tp) {id = 3}
// BAL-NEXT: %c, %tc = dan.alloc {id = 7, buf = 3} : !dan.buf<L0C, 256>
// BAL-NEXT: %t8 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%c, %p) after(%t3, %tc) {id = 8}
// BAL-NEXT: %t10 = dan.free %p after(%t8) {id = 10}
// BAL-NEXT: %q, %tq = dan.alloc {id = 4, buf = 2} : !dan.buf<L0A, 128>
// BAL-NEXT: %t5 = dan.dma "MOVE" on MTE1 cycles(100) bufs(%q, %a) after(%t1, %tq) {id = 5}
// BAL-NEXT: %t6 = dan.free %a after(%t3, %t5) {id = 6}
// BAL-NEXT: %t9 = dan.compute "MATMUL" on CUBE cycles(500) bufs(%c, %q) after(%t5, %t8) {id = 9}
// BAL-NEXT: %t11 = dan.free %q after(%t9) {id = 11}
// BAL-NEXT: %t12 = dan.free %c after(%t9) {id = 12}
// NOL0-LABEL: dan.kernel @l0
// NOL0: %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
// NOL0-NEXT: %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
// NOL0-NEXT: %q, %tq = dan.alloc {id = 4, buf = 2} : !dan.buf<L0A, 128>
// NOL0-NEXT: %t5 = dan.dma "MOVE" on MTE1 cycles(100) bufs(%q, %a) after(%t1, %tq) {id = 5}
// NOL0-NEXT: %p, %tp = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
// NOL0-NEXT: %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%p, %a) after(%t1, %tp) {id = 3}
// NOL0-NEXT: %t6 = dan.free %a after(%t3, %t5) {id = 6}
// NOL0-NEXT: %c, %tc = dan.alloc {id = 7, buf = 3} : !dan.buf<L0C, 256>
// NOL0-NEXT: %t8 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%c, %p) after(%t3, %tc) {id = 8}
// NOL0-NEXT: %t10 = dan.free %p after(%t8) {id = 10}
// NOL0-NEXT: %t9 = dan.compute "MATMUL" on CUBE cycles(500) bufs(%c, %q) after(%t5, %t8) {id = 9}
// NOL0-NEXT: %t11 = dan.free %q after(%t9) {id = 11}
// NOL0-NEXT: %t12 = dan.free %c after(%t9) {id = 12}

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

// -----

// Test the locality tie-break on a 2 x 2 tiled MATMUL, one k step per output tile:
// C[i][j] reads L1 tiles A[i] (buf 0, 1) and B[j] (buf 2, 3) through its own L0A, L0B
// and L0C buffers; tiles are created row by row. Every L0 ALLOC ties on level, delta
// and h, so `balanced` admits by id: C00 (MATMUL 9), C01 (18), C10 (27), C11 (34).
// `balanced-locality` admits the tile whose L1 tiles were used most recently: after C00
// (MOVE A0, then MOVE B0) it takes C10 (B0); there B0 is resident and A1 is loaded, so
// MOVE B0 runs before MOVE A1 and C11 (A1) follows, then C01: a snake, same peak.

// BAL-LABEL: dan.kernel @tiles
// BAL: "MATMUL" {{.*}} {id = 9}
// BAL: "MATMUL" {{.*}} {id = 18}
// BAL: "MATMUL" {{.*}} {id = 27}
// BAL: "MATMUL" {{.*}} {id = 34}
// LOC-LABEL: dan.kernel @tiles
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b0, %b4) {{.*}} {id = 5}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b2, %b5) {{.*}} {id = 7}
// LOC: "MATMUL" {{.*}} {id = 9}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b2, %b11) {{.*}} {id = 25}
// LOC: "COPY_IN" on MTE2 cycles(100) bufs(%b1) {{.*}} {id = 21}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b1, %b10) {{.*}} {id = 23}
// LOC: "MATMUL" {{.*}} {id = 27}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b1, %b13) {{.*}} {id = 30}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b3, %b14) {{.*}} {id = 32}
// LOC: "MATMUL" {{.*}} {id = 34}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b0, %b7) {{.*}} {id = 14}
// LOC: "MOVE" on MTE1 cycles(10) bufs(%b3, %b8) {{.*}} {id = 16}
// LOC: "MATMUL" {{.*}} {id = 18}
// LOC-NOT: "MATMUL"

dan.kernel @tiles {
  %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 64>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b0) after(%t0) {id = 1}
  %b2, %t2 = dan.alloc {id = 2, buf = 2} : !dan.buf<L1, 64>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b2) after(%t2) {id = 3}
  %b4, %t4 = dan.alloc {id = 4, buf = 4} : !dan.buf<L0A, 32>
  %t5 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b0, %b4) after(%t1, %t4) {id = 5}
  %b5, %t6 = dan.alloc {id = 6, buf = 5} : !dan.buf<L0B, 32>
  %t7 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b2, %b5) after(%t3, %t6) {id = 7}
  %b6, %t8 = dan.alloc {id = 8, buf = 6} : !dan.buf<L0C, 64>
  %t9 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%b4, %b5, %b6) after(%t5, %t7, %t8) {id = 9}
  %t10 = dan.dma "COPY_OUT" on FIXP cycles(30) bufs(%b6) after(%t9) {id = 10}
  %b3, %t11 = dan.alloc {id = 11, buf = 3} : !dan.buf<L1, 64>
  %t12 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b3) after(%t11) {id = 12}
  %b7, %t13 = dan.alloc {id = 13, buf = 7} : !dan.buf<L0A, 32>
  %t14 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b0, %b7) after(%t1, %t13) {id = 14}
  %b8, %t15 = dan.alloc {id = 15, buf = 8} : !dan.buf<L0B, 32>
  %t16 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b3, %b8) after(%t12, %t15) {id = 16}
  %b9, %t17 = dan.alloc {id = 17, buf = 9} : !dan.buf<L0C, 64>
  %t18 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%b7, %b8, %b9) after(%t14, %t16, %t17) {id = 18}
  %t19 = dan.dma "COPY_OUT" on FIXP cycles(30) bufs(%b9) after(%t18) {id = 19}
  %b1, %t20 = dan.alloc {id = 20, buf = 1} : !dan.buf<L1, 64>
  %t21 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b1) after(%t20) {id = 21}
  %b10, %t22 = dan.alloc {id = 22, buf = 10} : !dan.buf<L0A, 32>
  %t23 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b1, %b10) after(%t21, %t22) {id = 23}
  %b11, %t24 = dan.alloc {id = 24, buf = 11} : !dan.buf<L0B, 32>
  %t25 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b2, %b11) after(%t3, %t24) {id = 25}
  %b12, %t26 = dan.alloc {id = 26, buf = 12} : !dan.buf<L0C, 64>
  %t27 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%b10, %b11, %b12) after(%t23, %t25, %t26) {id = 27}
  %t28 = dan.dma "COPY_OUT" on FIXP cycles(30) bufs(%b12) after(%t27) {id = 28}
  %b13, %t29 = dan.alloc {id = 29, buf = 13} : !dan.buf<L0A, 32>
  %t30 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b1, %b13) after(%t21, %t29) {id = 30}
  %b14, %t31 = dan.alloc {id = 31, buf = 14} : !dan.buf<L0B, 32>
  %t32 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%b3, %b14) after(%t12, %t31) {id = 32}
  %b15, %t33 = dan.alloc {id = 33, buf = 15} : !dan.buf<L0C, 64>
  %t34 = dan.compute "MATMUL" on CUBE cycles(50) bufs(%b13, %b14, %b15) after(%t30, %t32, %t33) {id = 34}
  %t35 = dan.dma "COPY_OUT" on FIXP cycles(30) bufs(%b15) after(%t34) {id = 35}
  %t36 = dan.free %b0 after(%t1, %t5, %t14) {id = 36}
  %t37 = dan.free %b2 after(%t3, %t7, %t25) {id = 37}
  %t38 = dan.free %b4 after(%t5, %t9) {id = 38}
  %t39 = dan.free %b5 after(%t7, %t9) {id = 39}
  %t40 = dan.free %b6 after(%t9, %t10) {id = 40}
  %t41 = dan.free %b3 after(%t12, %t16, %t32) {id = 41}
  %t42 = dan.free %b7 after(%t14, %t18) {id = 42}
  %t43 = dan.free %b8 after(%t16, %t18) {id = 43}
  %t44 = dan.free %b9 after(%t18, %t19) {id = 44}
  %t45 = dan.free %b1 after(%t21, %t23, %t30) {id = 45}
  %t46 = dan.free %b10 after(%t23, %t27) {id = 46}
  %t47 = dan.free %b11 after(%t25, %t27) {id = 47}
  %t48 = dan.free %b12 after(%t27, %t28) {id = 48}
  %t49 = dan.free %b13 after(%t30, %t34) {id = 49}
  %t50 = dan.free %b14 after(%t32, %t34) {id = 50}
  %t51 = dan.free %b15 after(%t34, %t35) {id = 51}
}
