// RUN: not dan-opt %s -p mpas,cpe 2>&1 | filecheck %s --check-prefix=CPE
// RUN: not dan-opt -f json %s 2>&1 | filecheck %s --check-prefix=JSON

// Test that CPE refuses a kernel without a layout, as lower-sync does.
// CPE: dan-opt: error: cpe: kernel @k: the plan has no layout (run a layout pass such as dlr first)

// Test that an explicitly chosen frontend is honoured, and a mismatch is named.
// JSON: dan-opt: error: '{{.*}}input-faults.mlir': -f json reads graph JSON, but this is dan IR text

dan.kernel @k {
  %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 64>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%b0) after(%t0) {id = 1}
  %t2 = dan.free %b0 after(%t1) {id = 2}
}
