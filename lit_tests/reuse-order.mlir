// RUN: dan-gen matmul --m 2 --n 4 --k 2 | dan-opt -f json -p 'reuse-order,dlr,verify-plan,test-print-liveness' -t mlir - | filecheck %s
// RUN: dan-gen matmul --m 2 --n 4 --k 2 | dan-opt -f json -p 'reuse-order{paired=true},dlr,verify-plan,test-print-liveness' -t mlir - | filecheck %s
// RUN: not dan-opt %s -p 'reuse-order{expanded=0}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that reuse-order, with its groups in lockstep pairs too, gives a legal order
// that dlr lays out validly (verify-plan passes and the liveness print follows).
// CHECK: // liveness @
// CHECK: dan.kernel

// BAD: dan-opt: error: {{.*}}reuse-order{{.*}}expanded
dan.kernel @k {
  %x, %tx = dan.alloc {id = 0, buf = 0} : !dan.buf<UB, 32>
  %t1 = dan.dma "COPY_IN" on MTE2 cycles(10) bufs(%x) after(%tx) {id = 1}
  %t2 = dan.free %x after(%t1) {id = 2}
}
