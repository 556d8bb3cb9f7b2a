// RUN: not dan-opt %s -p cosma 2>&1 | filecheck %s

// Test that an operation whose buffers cannot fit their tier together is refused with
// the node, tier and sizes named: VADD needs 100 + 100 units of a 150-unit UB.
// CHECK: dan-opt: error: cosma: kernel @toobig: node 2 (VADD) needs 200 units of UB at once, which holds 150

dan.kernel @toobig attributes {target = #dan.target<"narrow", L1 = 4096, UB = 150, L0A = 256, L0B = 256, L0C = 512>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 100>
  %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 100>
  %t2 = dan.compute "VADD" on VECTOR cycles(10) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2, %ta) {id = 3}
  %t4 = dan.free %b after(%t2, %tb) {id = 4}
}
