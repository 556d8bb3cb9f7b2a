// RUN: not dan-opt %s -p 'cpe{window=0}' 2>&1 | filecheck %s --check-prefix=WINDOW
// RUN: not dan-opt %s -p 'cpe{window=2,passes=1}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not dan-opt %s -p cpe 2>&1 | filecheck %s --check-prefix=PLAN

// Test that a window below 1 is refused.
// WINDOW: dan-opt: error: bad pass pipeline 'cpe{window=0}': option 'window' of pass 'cpe': must be >= 1, got 0

// Test that pass options are separated by spaces, and a comma is pointed at.
// SYNTAX: dan-opt: error: bad pass pipeline 'cpe{window=2,passes=1}' at column 20: Malformed pass arguments, expected either a space or `}` here

// Test that CPE refuses a plan that is not valid to start with (x and y overlap).
// PLAN: dan-opt: error: cpe: kernel @overlap:
// PLAN-SAME: overlap

dan.kernel @overlap {
  %x, %tx = dan.alloc {id = 0, buf = 0, offset = 0} : !dan.buf<UB, 64>
  %y, %ty = dan.alloc {id = 1, buf = 1, offset = 32} : !dan.buf<UB, 64>
  %t2 = dan.compute "VADD" on VECTOR cycles(10) bufs(%x, %y) after(%tx, %ty) {id = 2}
  %t3 = dan.free %x after(%t2) {id = 3}
  %t4 = dan.free %y after(%t2) {id = 4}
}
