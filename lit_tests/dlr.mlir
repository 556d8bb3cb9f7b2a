// RUN: dan-opt %s --split-input-file -p dlr | filecheck %s --check-prefix=COST
// RUN: dan-opt %s --split-input-file -p 'dlr{policy=lru}' | filecheck %s --check-prefix=LRU
// RUN: dan-opt %s --split-input-file -p 'dlr{policy=belady}' | filecheck %s --check-prefix=BELADY
// RUN: not dan-opt %s --split-input-file -p 'dlr{alignment=64},verify-plan' | filecheck %s --check-prefix=ALIGN

// Test that three 128-unit L1 tiles, two of them live at once with a third arriving,
// in a 256-unit L1 are laid out best-fit and spilled by each policy's rule.
// cost and belady evict b1 (reload farthest away; all clean, equal cost), lru evicts
// b0 (least recently used). A buffer spilled while dead is reloaded before its FREE.
// The timing-aware defaults (see @pingpong) give the spec's plan here: the loads run
// back to back, so no idle MTE2 stretch can take a SPILL_IN earlier; each placement has
// a single free window; and every victim is released by the time its successor's load
// could start, so the stall term never applies.

// COST-LABEL: dan.kernel @two
// LRU-LABEL: dan.kernel @two
// BELADY-LABEL: dan.kernel @two
// ALIGN-LABEL: dan.kernel @two
// COST: %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
// COST-NEXT: %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
// COST-NEXT: %b, %tb = dan.alloc {id = 2, buf = 1, offset = 128} : !dan.buf<L1, 128>
// COST-NEXT: %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b) after(%tb) {id = 3}
// COST-NEXT: %t14 = dan.spill_out %b after(%tb, %t3) {id = 14}
// COST-NEXT: %c, %tc = dan.alloc {id = 4, buf = 2, offset = 128} : !dan.buf<L1, 128>
// COST-NEXT: %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%c) after(%tc) {id = 5}
// COST-NEXT: %l, %tl = dan.alloc {id = 6, buf = 3, offset = 0} : !dan.buf<L0A, 128>
// COST-NEXT: %t7 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %a) after(%t1, %tl) {id = 7}
// COST-NEXT: %t16 = dan.spill_out %a after(%ta, %t1, %t7) {id = 16}
// COST-NEXT: %b_1, %t15 = dan.spill_in %b after(%t14) {id = 15, offset = 0}
// COST-NEXT: %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %b_1) after(%t3, %t7) {id = 8}
// COST-NEXT: %t9 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %c) after(%t5, %t8) {id = 9}
// COST-NEXT: %t18 = dan.spill_out %b_1 after(%t15, %t8) {id = 18}
// COST-NEXT: %a_1, %t17 = dan.spill_in %a after(%t16) {id = 17, offset = 0}
// COST-NEXT: %t10 = dan.free %a_1 after(%t7) {id = 10}
// COST-NEXT: %b_2, %t19 = dan.spill_in %b_1 after(%t18) {id = 19, offset = 0}
// COST-NEXT: %t11 = dan.free %b_2 after(%t8) {id = 11}
// COST-NEXT: %t12 = dan.free %c after(%t9) {id = 12}
// COST-NEXT: %t13 = dan.free %l after(%t9) {id = 13}
// LRU: %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
// LRU: %b, %tb = dan.alloc {id = 2, buf = 1, offset = 128} : !dan.buf<L1, 128>
// LRU: %t14 = dan.spill_out %a after(%ta, %t1) {id = 14}
// LRU: %c, %tc = dan.alloc {id = 4, buf = 2, offset = 0} : !dan.buf<L1, 128>
// LRU: %l, %tl = dan.alloc {id = 6, buf = 3, offset = 0} : !dan.buf<L0A, 128>
// LRU: %t16 = dan.spill_out %b after(%tb, %t3) {id = 16}
// LRU: %a_1, %t15 = dan.spill_in %a after(%t14) {id = 15, offset = 128}
// LRU: %t18 = dan.spill_out %c after(%tc, %t5) {id = 18}
// LRU: %b_1, %t17 = dan.spill_in %b after(%t16) {id = 17, offset = 0}
// LRU: %t20 = dan.spill_out %a_1 after(%t15, %t7) {id = 20}
// LRU: %c_1, %t19 = dan.spill_in %c after(%t18) {id = 19, offset = 128}
// LRU: %t22 = dan.spill_out %b_1 after(%t17, %t8) {id = 22}
// LRU: %a_2, %t21 = dan.spill_in %a_1 after(%t20) {id = 21, offset = 0}
// LRU: %b_2, %t23 = dan.spill_in %b_1 after(%t22) {id = 23, offset = 0}
// BELADY: %t14 = dan.spill_out %b after(%tb, %t3) {id = 14}
// BELADY: %t16 = dan.spill_out %a after(%ta, %t1, %t7) {id = 16}
// BELADY: %b_1, %t15 = dan.spill_in %b after(%t14) {id = 15, offset = 0}
// BELADY: %t18 = dan.spill_out %b_1 after(%t15, %t8) {id = 18}
// BELADY: %a_1, %t17 = dan.spill_in %a after(%t16) {id = 17, offset = 0}
// BELADY: %b_2, %t19 = dan.spill_in %b_1 after(%t18) {id = 19, offset = 0}
// ALIGN: %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
// ALIGN: %b, %tb = dan.alloc {id = 2, buf = 1, offset = 128} : !dan.buf<L1, 128>
// ALIGN: %c, %tc = dan.alloc {id = 4, buf = 2, offset = 128} : !dan.buf<L1, 128>
// ALIGN: %l, %tl = dan.alloc {id = 6, buf = 3, offset = 0} : !dan.buf<L0A, 128>
// ALIGN: %b_1, %t15 = dan.spill_in %b after(%t14) {id = 15, offset = 0}
// ALIGN: %a_1, %t17 = dan.spill_in %a after(%t16) {id = 17, offset = 0}
// ALIGN: %b_2, %t19 = dan.spill_in %b_1 after(%t18) {id = 19, offset = 0}

dan.kernel @two attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1} : !dan.buf<L1, 128>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b) after(%tb) {id = 3}
  %c, %tc = dan.alloc {id = 4, buf = 2} : !dan.buf<L1, 128>
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%c) after(%tc) {id = 5}
  %l, %tl = dan.alloc {id = 6, buf = 3} : !dan.buf<L0A, 128>
  %t7 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %a) after(%t1, %tl) {id = 7}
  %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %b) after(%t3, %t7) {id = 8}
  %t9 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %c) after(%t5, %t8) {id = 9}
  %t10 = dan.free %a after(%t7) {id = 10}
  %t11 = dan.free %b after(%t8) {id = 11}
  %t12 = dan.free %c after(%t9) {id = 12}
  %t13 = dan.free %l after(%t9) {id = 13}
}

// -----

// Test that best fit takes the segment with the smallest leftover (d goes to the
// exact 32-unit hole at 96, not the 48-unit hole at 32) and that freed neighbours
// merge (e, 96 units, fits at 0 once a and c are freed). Aligned to 64, VADD's
// three buffers need 192 units of a 128-unit UB: a clear error, no plan.

// COST-LABEL: dan.kernel @bestfit
// ALIGN: error: dlr: kernel @bestfit: node 3 (VADD) needs 192 units of UB (aligned to 64) for buffer 0 size 32, buffer 1 size 48, buffer 2 size 16, but UB holds 128 on target 'tiny'

dan.kernel @bestfit attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 48>
  %c, %tc = dan.alloc {id = 2, buf = 2} : !dan.buf<UB, 16>
  %t3 = dan.compute "VADD" on VECTOR cycles(5) bufs(%a, %b, %c) after(%ta, %tb, %tc) {id = 3}
  %t4 = dan.free %b after(%t3) {id = 4}
  %d, %td = dan.alloc after(%t4) {id = 5, buf = 3} : !dan.buf<UB, 32>
  %t6 = dan.compute "EXP" on VECTOR cycles(5) bufs(%a, %d) after(%td, %t3) {id = 6}
  %t7 = dan.free %a after(%t6) {id = 7}
  %t8 = dan.free %c after(%t3) {id = 8}
  %e, %te = dan.alloc after(%t7, %t8) {id = 9, buf = 4} : !dan.buf<UB, 96>
  %t10 = dan.compute "EXP" on VECTOR cycles(5) bufs(%d, %e) after(%te, %t6) {id = 10}
  %t11 = dan.free %d after(%t10) {id = 11}
  %t12 = dan.free %e after(%t10) {id = 12}
}

// -----

// Test the timed L0 placement (the default): y could be moved from t = 20 (MTE1 is
// free then), but the range x used, [0, 128), is released only when the first MMAD
// ends (t = 120). [128, 256) was never used, so y goes there (ping-pong) and its MOVE
// overlaps the first MMAD; best fit (the spec's rule) would put y at 0 and wait.

// COST-LABEL: dan.kernel @pingpong
// COST: %x, %tx = dan.alloc {id = 2, buf = 1, offset = 0} : !dan.buf<L0A, 128>
// COST: %y, %ty = dan.alloc {id = 7, buf = 3, offset = 128} : !dan.buf<L0A, 128>
// COST-NEXT: %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%y, %a) after(%t3, %ty) {id = 8}
// LRU-LABEL: dan.kernel @pingpong
// LRU: %y, %ty = dan.alloc {id = 7, buf = 3, offset = 128} : !dan.buf<L0A, 128>
// BELADY-LABEL: dan.kernel @pingpong
// BELADY: %y, %ty = dan.alloc {id = 7, buf = 3, offset = 128} : !dan.buf<L0A, 128>

dan.kernel @pingpong attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 256, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 128>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%a) after(%ta) {id = 1}
  %x, %tx = dan.alloc {id = 2, buf = 1} : !dan.buf<L0A, 128>
  %t3 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%x, %a) after(%t1, %tx) {id = 3}
  %c, %tc = dan.alloc {id = 4, buf = 2} : !dan.buf<L0C, 256>
  %t5 = dan.compute "MMAD" on CUBE cycles(100) bufs(%c, %x) after(%tc, %t3) {id = 5}
  %t6 = dan.free %x after(%t5) {id = 6}
  %y, %ty = dan.alloc {id = 7, buf = 3} : !dan.buf<L0A, 128>
  %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%y, %a) after(%t3, %ty) {id = 8}
  %t9 = dan.compute "MMAD" on CUBE cycles(100) bufs(%c, %y) after(%t5, %t8) {id = 9}
  %t10 = dan.free %y after(%t9) {id = 10}
  %t11 = dan.free %c after(%t9) {id = 11}
  %t12 = dan.free %a after(%t8) {id = 12}
}
