// RUN: not dan-opt %s -p 'mpas{policy=greedy}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: not dan-opt %s -p 'mpas{l0_rule=maybe}' 2>&1 | filecheck %s --check-prefix=BOOL
// RUN: not dan-opt %s -p 'mpas{window=3}' 2>&1 | filecheck %s --check-prefix=UNKNOWN

// Test that an unknown policy is a diagnostic listing the valid ones.
// POLICY: dan-opt: error: bad pass pipeline 'mpas{policy=greedy}': option 'policy' of pass 'mpas': unknown value 'greedy' (valid: balanced, memory-first, criticality-first, balanced-locality)

// Test that an option of the wrong type is refused with the option named.
// BOOL: dan-opt: error: bad pass pipeline 'mpas{l0_rule=maybe}': option 'l0-rule' of pass 'mpas': expects a bool, got 'maybe'

// Test that an option the pass does not have is refused with the options listed.
// UNKNOWN: dan-opt: error: bad pass pipeline 'mpas{window=3}': pass 'mpas' has no option 'window' (valid: policy, l0-rule)

dan.kernel @k {
}
