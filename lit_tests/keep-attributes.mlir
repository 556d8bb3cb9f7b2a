// RUN: dan-opt %s --split-input-file -p mpas,dlr,cpe | filecheck %s
// RUN: xdsl-opt %s --split-input-file -p mpas,dlr,cpe | filecheck %s
// RUN: dan-opt %s --split-input-file -p mpas,dlr,cpe,lower-sync | filecheck %s --check-prefix=SYNC
// RUN: dan-opt %s --split-input-file -p dlr | filecheck %s --check-prefix=SAME
// RUN: dan-opt %s --split-input-file -p 'dlr{policy=lru}' | filecheck %s --check-prefix=LRU
// RUN: dan-opt %s --split-input-file -p dlr,lower-sync | filecheck %s --check-prefix=SPILL-SYNC

// Test that the planning passes keep what they do not own: MPAS runs chain y first,
// DLR adds offsets, and the kernel's `origin`, each op's `note`/`group` and every SSA
// name come out as they went in (ops without attributes stay as they were). Through
// lower-sync the kernel's attributes go to the program and each op's to its exec
// (the ALLOC and FREE have no op there).

// CHECK-LABEL: dan.kernel @chains attributes {origin = "frontend", target = #dan.target<contest>} {
// CHECK-NEXT:    %y, %ty = dan.alloc {id = 3, buf = 1, offset = 0} : !dan.buf<UB, 32>
// CHECK-NEXT:    %ey = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%ty) {id = 4, group = 7 : i32}
// CHECK-NEXT:    %fy = dan.free %y after(%ey) {id = 5}
// CHECK-NEXT:    %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0, note = "alloc-x"} : !dan.buf<UB, 32>
// CHECK-NEXT:    %ex = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%tx) {id = 1, note = "keep-me"}
// CHECK-NEXT:    %fx = dan.free %x after(%ex) {id = 2}
// CHECK-NEXT:  }

// SYNC-LABEL: dan_sync.program @chains event_ids(8) attributes {origin = "frontend", target = #dan.target<contest>} {
// SYNC-NEXT:    dan_sync.stream "VECTOR" {
// SYNC-NEXT:      dan_sync.exec "EXP" id 4 cycles 100 (UB[0, 32) buf 1) {group = 7 : i32}
// SYNC-NEXT:      dan_sync.exec "EXP" id 1 cycles 10 (UB[0, 32) buf 0) {note = "keep-me"}
// SYNC-NEXT:    }

dan.kernel @chains attributes {origin = "frontend", target = #dan.target<contest>} {
  %x, %tx = dan.alloc {id = 0, buf = 0, note = "alloc-x"} : !dan.buf<UB, 32>
  %ex = dan.compute "EXP" on VECTOR cycles(10) bufs(%x) after(%tx) {id = 1, note = "keep-me"}
  %fx = dan.free %x after(%ex) {id = 2}
  %y, %ty = dan.alloc {id = 3, buf = 1} : !dan.buf<UB, 32>
  %ey = dan.compute "EXP" on VECTOR cycles(100) bufs(%y) after(%ty) {id = 4, group = 7 : i32}
  %fy = dan.free %y after(%ey) {id = 5}
}

// -----

// Test that spill ops keep their attributes and names when the plan's spills move the
// same buffers in the same ranks as the input's: DLR reproduces the input's three
// spills (b, a, b), so only their node ids change (to the plan's spill ids 14-19).
// Its LRU policy spills five times, a, b, c, a, b: those spills are the pass's own,
// with no attributes, named after the value they spill. After DLR, lower-sync gives
// each spill's exec the spill op's attributes. The kernel's attribute after `target`
// stays after it. MPAS's order needs no spill.

// CHECK-LABEL: dan.kernel @spilled attributes {target = #dan.target<"tiny"{{.*}}>, origin = "frontend"} {
// CHECK-NOT:     spill
// CHECK:       }

// SAME-LABEL: dan.kernel @spilled attributes {target = #dan.target<"tiny"{{.*}}>, origin = "frontend"} {
// SAME:        %out_b = dan.spill_out %b after(%tb, %t3) {id = 14, note = "spill-b"}
// SAME:        %out_a = dan.spill_out %a after(%ta, %t1, %t7) {id = 16}
// SAME-NEXT:   %b_back, %in_b = dan.spill_in %b after(%out_b) {id = 15, offset = 0, note = "reload-b"}
// SAME-NEXT:   %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %b_back) after(%t3, %t7) {id = 8, note = "uses-b"}
// SAME:        %out_b2 = dan.spill_out %b_back after(%in_b, %t8) {id = 18}
// SAME-NEXT:   %a_back, %in_a = dan.spill_in %a after(%out_a) {id = 17, offset = 0}
// SAME-NEXT:   %t10 = dan.free %a_back after(%t7) {id = 10}
// SAME-NEXT:   %b_again, %in_b2 = dan.spill_in %b_back after(%out_b2) {id = 19, offset = 0}

// LRU-LABEL: dan.kernel @spilled attributes {target = #dan.target<"tiny"{{.*}}>, origin = "frontend"} {
// LRU:         %t14 = dan.spill_out %a after(%ta, %t1) {id = 14}
// LRU:         %t16 = dan.spill_out %b after(%tb, %t3) {id = 16}
// LRU-NEXT:    %a_1, %t15 = dan.spill_in %a after(%t14) {id = 15, offset = 128}
// LRU:         %b_1, %t17 = dan.spill_in %b after(%t16) {id = 17, offset = 0}
// LRU-NEXT:    %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %b_1) after(%t3, %t7) {id = 8, note = "uses-b"}
// LRU-NOT:     spill-b
// LRU-NOT:     reload-b
// LRU:       }

// SPILL-SYNC-LABEL: dan_sync.program @spilled event_ids(8) attributes {target = #dan.target<"tiny"{{.*}}>, origin = "frontend"} {
// SPILL-SYNC:         dan_sync.stream "MTE1" {
// SPILL-SYNC:           dan_sync.exec "MOVE" id 8 cycles 10 (L0A[0, 128) buf 3, L1[0, 128) buf 1) {note = "uses-b"}
// SPILL-SYNC:         dan_sync.stream "MTE2" {
// SPILL-SYNC:           dan_sync.exec "SPILL_IN" id 15 cycles {{[0-9]+}} (L1[0, 128) buf 1) {note = "reload-b"}
// SPILL-SYNC-NEXT:      dan_sync.set_flag
// SPILL-SYNC-NEXT:      dan_sync.wait_flag
// SPILL-SYNC-NEXT:      dan_sync.exec "SPILL_IN" id 17 cycles {{[0-9]+}} (L1[0, 128) buf 0){{$}}
// SPILL-SYNC:         dan_sync.stream "MTE3" {
// SPILL-SYNC:           dan_sync.exec "SPILL_OUT" id 14 cycles {{[0-9]+}} (L1[128, 256) buf 1) {note = "spill-b"}

dan.kernel @spilled attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 128, L0B = 128, L0C = 256>, origin = "frontend"} {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<L1, 128>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%a) after(%ta) {id = 1}
  %b, %tb = dan.alloc {id = 2, buf = 1, offset = 128} : !dan.buf<L1, 128>
  %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b) after(%tb) {id = 3}
  %out_b = dan.spill_out %b after(%tb, %t3) {id = 40, note = "spill-b"}
  %c, %tc = dan.alloc {id = 4, buf = 2, offset = 128} : !dan.buf<L1, 128>
  %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%c) after(%tc) {id = 5}
  %l, %tl = dan.alloc {id = 6, buf = 3, offset = 0} : !dan.buf<L0A, 128>
  %t7 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %a) after(%t1, %tl) {id = 7}
  %out_a = dan.spill_out %a after(%ta, %t1, %t7) {id = 42}
  %b_back, %in_b = dan.spill_in %b after(%out_b) {id = 41, offset = 0, note = "reload-b"}
  %t8 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %b_back) after(%t3, %t7) {id = 8, note = "uses-b"}
  %t9 = dan.dma "MOVE" on MTE1 cycles(10) bufs(%l, %c) after(%t5, %t8) {id = 9}
  %out_b2 = dan.spill_out %b_back after(%in_b, %t8) {id = 44}
  %a_back, %in_a = dan.spill_in %a after(%out_a) {id = 43, offset = 0}
  %t10 = dan.free %a_back after(%t7) {id = 10}
  %b_again, %in_b2 = dan.spill_in %b_back after(%out_b2) {id = 45, offset = 0}
  %t11 = dan.free %b_again after(%t8) {id = 11}
  %t12 = dan.free %c after(%t9) {id = 12}
  %t13 = dan.free %l after(%t9) {id = 13}
}

// -----

// Test that results without a name (numbered in the input) get the names a built
// kernel gives them, %b<buf> and %t<id>, as for a graph input.

// CHECK-LABEL: dan.kernel @numbered attributes {target = #dan.target<contest>} {
// CHECK-NEXT:    %b0, %t0 = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 32>
// CHECK-NEXT:    %t1 = dan.compute "EXP" on VECTOR cycles(10) bufs(%b0) after(%t0) {id = 1}
// CHECK-NEXT:    %t2 = dan.free %b0 after(%t1) {id = 2}
// CHECK-NEXT:  }

dan.kernel @numbered {
  %0, %1 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %2 = dan.compute "EXP" on VECTOR cycles(10) bufs(%0) after(%1) {id = 1}
  %3 = dan.free %0 after(%2) {id = 2}
}
