// RUN: xdsl-opt %s --split-input-file --verify-diagnostics --parsing-diagnostics | filecheck %s

// Test that a buffer used after its FREE is rejected.
dan.kernel @use_after_free {
  %b, %ta = dan.alloc {id = 0, buf = 3} : !dan.buf<UB, 128>
  %t1 = dan.free %b after(%ta) {id = 9}
  %t2 = dan.compute "EXP" on VECTOR cycles(4) bufs(%b) after(%ta) {id = 2}
}
// CHECK: dan.compute (node 2): use of buffer 3 after its FREE (node 9)

// -----

// Test that a buffer used after its SPILL_OUT (instead of the SPILL_IN's value) is rejected.
dan.kernel @use_after_spill_out {
  %b, %ta = dan.alloc {id = 0, buf = 3, offset = 0} : !dan.buf<UB, 128>
  %so = dan.spill_out %b after(%ta) {id = 10}
  %b2, %si = dan.spill_in %b after(%so) {id = 11, offset = 0}
  %t2 = dan.compute "EXP" on VECTOR cycles(4) bufs(%b) after(%si) {id = 2}
  %t3 = dan.free %b2 after(%t2) {id = 3}
}
// CHECK: dan.compute (node 2): use of buffer 3 after its SPILL_OUT (node 10)

// -----

// Test that a FREE that is not after every use of its buffer is rejected (the second
// FREE is a use after the first).
dan.kernel @double_free {
  %b, %ta = dan.alloc {id = 0, buf = 4} : !dan.buf<L1, 16>
  %t1 = dan.free %b after(%ta) {id = 1}
  %t2 = dan.free %b after(%ta) {id = 2}
}
// CHECK: dan.free (node 2): use of buffer 4 after its FREE (node 1)

// -----

// Test that waiting for a token defined later in the block is rejected.
dan.kernel @token_before_def {
  %b, %ta = dan.alloc after(%t1) {id = 0, buf = 0} : !dan.buf<L1, 16>
  %t1 = dan.free %b after(%ta) {id = 1}
}
// CHECK: dan.alloc (node 0): waits for the token of node 1 (dan.free), which is scheduled later

// -----

// Test that a buffer used before its ALLOC is rejected (generic format, which allows
// forward references).
"dan.kernel"() <{sym_name = "buffer_before_def"}> ({
  %t1 = "dan.free"(%b) <{id = 1 : i64}> : (!dan.buf<L1, 16>) -> !dan.token
  %b, %ta = "dan.alloc"() <{id = 0 : i64, buf = 5 : i64}> : () -> (!dan.buf<L1, 16>, !dan.token)
}) : () -> ()
// CHECK: dan.free (node 1): uses buffer 5 before its ALLOC (node 0)

// -----

// Test that the custom format rejects a buffer used before its definition at parse time.
dan.kernel @buffer_before_def_custom {
  %t1 = dan.free %b {id = 1}
  %b, %ta = dan.alloc {id = 0, buf = 5} : !dan.buf<L1, 16>
}
// CHECK: buffer %b used before its definition

// -----

// Test that duplicate node ids are rejected.
dan.kernel @duplicate_ids {
  %b, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 16>
  %t1 = dan.free %b after(%ta) {id = 0}
}
// CHECK: dan.free (node 0): duplicate node id 0 (also used by a dan.alloc)

// -----

// Test that a buffer id allocated twice is rejected.
dan.kernel @duplicate_buffer {
  %a, %ta = dan.alloc {id = 0, buf = 1} : !dan.buf<L1, 16>
  %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 16>
  %t2 = dan.free %a {id = 2}
  %t3 = dan.free %b {id = 3}
}
// CHECK: dan.alloc (node 1): buffer 1 is allocated twice (first by node 0)

// -----

// Test that a buffer larger than its tier on the default target is rejected.
dan.kernel @too_big {
  %b, %ta = dan.alloc {id = 0, buf = 2} : !dan.buf<UB, 2048>
  %t1 = dan.free %b after(%ta) {id = 1}
}
// CHECK: dan.alloc (node 0): buffer 2 of size 2048 exceeds UB capacity 1024 of target contest

// -----

// Test that capacities come from the kernel's own target.
dan.kernel @too_big_custom attributes {target = #dan.target<"tiny", L1 = 64, UB = 64, L0A = 64, L0B = 64, L0C = 64>} {
  %b, %ta = dan.alloc {id = 0, buf = 2} : !dan.buf<L1, 128>
  %t1 = dan.free %b after(%ta) {id = 1}
}
// CHECK: dan.alloc (node 0): buffer 2 of size 128 exceeds L1 capacity 64 of target tiny

// -----

// Test that a buffer that is never freed is rejected.
dan.kernel @never_freed {
  %b, %ta = dan.alloc {id = 0, buf = 6} : !dan.buf<L1, 16>
}
// CHECK: dan.kernel @never_freed: buffer 6 (ALLOC node 0) is never freed

// -----

// Test that an unknown tier is an error naming the target's tiers.
dan.kernel @unknown_tier {
  %b, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<L2, 16>
}
// CHECK: unknown tier 'L2' (tiers: L1, UB, L0A, L0B, L0C)

// -----

// Test that the generic format rejects an unknown tier with the same message.
"dan.kernel"() <{sym_name = "unknown_tier_generic"}> ({
  %b, %ta = "dan.alloc"() <{id = 0 : i64, buf = 0 : i64}> : () -> (!dan.buf<L2, 16>, !dan.token)
}) : () -> ()
// CHECK: unknown tier 'L2' (tiers: L1, UB, L0A, L0B, L0C)

// -----

// Test that an unknown pipe is an error naming the target's pipes.
dan.kernel @unknown_pipe {
  %t = dan.compute "EXP" on GPU cycles(4) {id = 0}
}
// CHECK: unknown pipe 'GPU' (pipes: MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR)

// -----

// Test that the generic format gives an unknown pipe the same message.
"dan.kernel"() <{sym_name = "unknown_pipe_generic"}> ({
  %t = "dan.compute"() <{id = 0 : i64, op = "EXP", pipe = #dan.pipe<GPU>, cycles = 4 : i64, operandSegmentSizes = array<i32: 0, 0>}> : () -> !dan.token
}) : () -> ()
// CHECK: dan.compute (node 0): unknown pipe 'GPU' (pipes: MTE1, MTE2, MTE3, FIXP, CUBE, VECTOR)

// -----

// Test that dan.compute rejects a data-movement pipe.
dan.kernel @compute_on_mte2 {
  %t = dan.compute "COPY_IN" on MTE2 cycles(4) {id = 0}
}
// CHECK: dan.compute (node 0): pipe MTE2 is not a compute pipe (CUBE, VECTOR); data movement uses dan.dma

// -----

// Test that dan.dma rejects a compute pipe.
dan.kernel @dma_on_cube {
  %t = dan.dma "MATMUL" on CUBE cycles(4) {id = 0}
}
// CHECK: dan.dma (node 0): pipe CUBE is not a data-movement pipe (MTE1, MTE2, MTE3, FIXP); computation uses dan.compute

// -----

// Test that negative cycles are rejected.
dan.kernel @negative_cycles {
  %t = dan.dma "COPY_IN" on MTE2 cycles(-1) {id = 0}
}
// CHECK: dan.dma (node 0): negative cycles -1

// -----

// Test that the operation names of the dedicated ops are reserved.
dan.kernel @reserved_name {
  %t = dan.compute "ALLOC" on CUBE cycles(1) {id = 0}
}
// CHECK: dan.compute (node 0): operation name 'ALLOC' is reserved for dan.alloc, dan.free and dan.spill_*

// -----

// Test that a dan.spill_in of a buffer that is still resident is rejected.
dan.kernel @spill_in_resident {
  %b, %ta = dan.alloc {id = 0, buf = 3, offset = 0} : !dan.buf<UB, 128>
  %b2, %si = dan.spill_in %b after(%ta) {id = 11, offset = 0}
  %t1 = dan.free %b2 {id = 1}
}
// CHECK: dan.spill_in (node 11): buffer 3 is not spilled out (no dan.spill_out of this value before it)

// -----

// Test that a spilled value can be brought back only once.
dan.kernel @spill_in_twice {
  %b, %ta = dan.alloc {id = 0, buf = 3, offset = 0} : !dan.buf<UB, 128>
  %so = dan.spill_out %b {id = 10}
  %b2, %si = dan.spill_in %b after(%so) {id = 11, offset = 0}
  %b3, %si2 = dan.spill_in %b after(%so) {id = 12, offset = 128}
  %t1 = dan.free %b2 {id = 1}
}
// CHECK: dan.spill_in (node 12): buffer 3 was already brought back by node 11

// -----

// Test that dan.spill_in keeps the type of the buffer it brings back.
"dan.kernel"() <{sym_name = "spill_in_type"}> ({
  %b, %ta = "dan.alloc"() <{id = 0 : i64, buf = 0 : i64, offset = 0 : i64}> : () -> (!dan.buf<UB, 16>, !dan.token)
  %so = "dan.spill_out"(%b) <{id = 1 : i64}> : (!dan.buf<UB, 16>) -> !dan.token
  %b2, %si = "dan.spill_in"(%b) <{id = 2 : i64, offset = 0 : i64}> : (!dan.buf<UB, 16>) -> (!dan.buf<UB, 32>, !dan.token)
}) : () -> ()
// CHECK: dan.spill_in (node 2): result type !dan.buf<UB, 32> differs from operand type !dan.buf<UB, 16>

// -----

// Test that ops that are not graph nodes are left alone and the node ops around them
// are still checked.
dan.kernel @foreign_op {
  %b, %ta = dan.alloc {id = 0, buf = 3} : !dan.buf<UB, 128>
  %c = "test.op"(%b) : (!dan.buf<UB, 128>) -> !dan.token
  %t1 = dan.free %b after(%c) {id = 9}
  %t2 = dan.compute "EXP" on VECTOR cycles(4) bufs(%b) after(%ta) {id = 2}
}
// CHECK: dan.compute (node 2): use of buffer 3 after its FREE (node 9)

// -----

// Test that an unknown target preset is a parse error naming the presets.
dan.kernel @unknown_target attributes {target = #dan.target<h100>} {
}
// CHECK: unknown target preset 'h100' (presets: contest, ascend910b)

// -----

// Test that a custom target must give every tier's capacity.
dan.kernel @partial_target attributes {target = #dan.target<"half", L1 = 64, UB = 64>} {
}
// CHECK: target 'half': no capacity for tier L0A
