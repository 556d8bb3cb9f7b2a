// RUN: not dan-opt %s -p 'dlr{policy=fifo}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not dan-opt %s -p 'dlr{alignment=0}' 2>&1 | filecheck %s --check-prefix=ALIGN
// RUN: not dan-opt %s -p dlr 2>&1 | filecheck %s --check-prefix=TOOBIG

// Test that an unknown policy is a diagnostic listing the valid ones.
// POLICY: dan-opt: error: bad pass pipeline 'dlr{policy=fifo}': option 'policy' of pass 'dlr': unknown value 'fifo' (valid: cost, lru, belady, belady-cost, planned)

// Test that a non-positive alignment is refused.
// ALIGN: dan-opt: error: bad pass pipeline 'dlr{alignment=0}': option 'alignment' of pass 'dlr': must be >= 1, got 0

// Test that one operation needing more of a tier than the tier holds fails with
// the node, tier and sizes named.
// TOOBIG: dan-opt: error: dlr: kernel @toobig: node 2 (VADD) needs 160 units of UB for buffer 0 size 96, buffer 1 size 64, but UB holds 128 on target 'tiny'

dan.kernel @toobig attributes {target = #dan.target<"tiny", L1 = 256, UB = 128, L0A = 128, L0B = 128, L0C = 256>} {
  %a, %ta = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 96>
  %b, %tb = dan.alloc {id = 1, buf = 1} : !dan.buf<UB, 64>
  %t2 = dan.compute "VADD" on VECTOR cycles(5) bufs(%a, %b) after(%ta, %tb) {id = 2}
  %t3 = dan.free %a after(%t2) {id = 3}
  %t4 = dan.free %b after(%t2) {id = 4}
}
