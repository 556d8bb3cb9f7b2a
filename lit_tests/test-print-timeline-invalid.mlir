// RUN: not dan-opt %s -p test-print-timeline 2>&1 | filecheck %s

// Test that a plan the replay rejects has no timeline: the first broken invariant is
// named (b at [32, 96) overlaps a at [0, 64)).
// CHECK: dan-opt: error: test-print-timeline: kernel @overlap: invalid plan (overlap): ALLOC 1: buffer 1 at [32, 96) overlaps buffer 0 at [0, 64) in UB

dan.kernel @overlap {
  %a, %ta = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %b, %tb = dan.alloc {id = 1, buf = 1, offset = 32} : !dan.buf<UB, 64>
  %t2 = dan.compute "VADD" on VECTOR cycles(10) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %t4 = dan.free %b after(%t2) {id = 4}
}
