// RUN: dan-gen matmul --m 1 --n 1 --k 2 --tile 64 -o %t.json
// RUN: dan-opt %t.json | filecheck %s
// RUN: dan-opt --mpas --dlr --cpe %t.json -t plan -o %t.plan && dan-replay %t.json --plan %t.plan | filecheck %s --check-prefix=REPLAY
// RUN: not dan-gen conv --halo -1 2>&1 | filecheck %s --check-prefix=ERR
// RUN: not dan-gen matmul --shapes 100000x100000x100000 --count 1 -o %t.big 2>&1 | filecheck %s --check-prefix=BIG
// RUN: not ls %t.big
// RUN: not dan-gen matmul --m 4 --n 4 --k 4 --tile 128 --count 3 -o %t.same 2>&1 | filecheck %s --check-prefix=SAME

// Test that a generated matmul lists its nodes in the traced program order (ALLOC of
// the accumulator, per k step the L1 loads, ALLOC L0A/L0B, the two MOVEs and the
// MATMUL, then the tile's COPY_OUT, every FREE last in buffer order), that edges follow
// the traces' rule (last writer -> user, ALLOC and readers -> FREE, a reader ordered
// before a later reader of the same buffer is left out), and that the kernel plans.

// CHECK:      dan.kernel @
// CHECK-NEXT:   %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<L0C, 128>
// CHECK-NEXT:   %b1, %t1 = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 64>
// CHECK-NEXT:   %b2, %t2 = dan.alloc {id = 2, buf = 2} : !dan.buf<L1, 64>
// CHECK-NEXT:   %t3 = dan.dma "COPY_IN" on MTE2 cycles(197) bufs(%b1) after(%t1) {id = 3}
// CHECK-NEXT:   %t4 = dan.dma "COPY_IN" on MTE2 cycles(197) bufs(%b2) after(%t2) {id = 4}
// CHECK-NEXT:   %b3, %t5 = dan.alloc {id = 5, buf = 3} : !dan.buf<L0A, 64>
// CHECK-NEXT:   %b4, %t6 = dan.alloc {id = 6, buf = 4} : !dan.buf<L0B, 64>
// CHECK-NEXT:   %t7 = dan.dma "MOVE" on MTE1 cycles(15) bufs(%b3, %b1) after(%t3, %t5) {id = 7}
// CHECK-NEXT:   %t8 = dan.dma "MOVE" on MTE1 cycles(15) bufs(%b4, %b2) after(%t4, %t6) {id = 8}
// CHECK-NEXT:   %t9 = dan.compute "MATMUL" on CUBE cycles(64) bufs(%b0, %b4, %b3) after(%t0, %t7, %t8) {id = 9}
// CHECK-NEXT:   %b5, %t10 = dan.alloc {id = 10, buf = 5} : !dan.buf<L1, 64>
// CHECK-NEXT:   %b6, %t11 = dan.alloc {id = 11, buf = 6} : !dan.buf<L1, 64>
// CHECK:        %t18 = dan.compute "MATMUL" on CUBE cycles(64) bufs(%b0, %b8, %b7) after(%t9, %t16, %t17) {id = 18}
// CHECK-NEXT:   %t19 = dan.dma "COPY_OUT" on FIXP cycles(135) bufs(%b0) after(%t18) {id = 19}
// CHECK-NEXT:   %t20 = dan.free %b0 after(%t0, %t19) {id = 20}
// CHECK-NEXT:   %t21 = dan.free %b1 after(%t1, %t7) {id = 21}
// CHECK:        %t28 = dan.free %b8 after(%t15, %t18) {id = 28}
// CHECK-NEXT: }

// REPLAY: kernel {{.*}}: valid
// REPLAY: spills: 0

// ERR: dan-gen: error: conv: layers, blocks and channels must be at least 1, halo and upsample at least 0

// Test that a kernel over the node limit is refused from its shape, before anything is
// built or written, and that --count is refused when the shape leaves nothing to vary.
// BIG: dan-gen: error: matmul_100000x100000x100000 would have 7,000,090,000,000,000 nodes, over the limit of 1,000,000 (raise it with --max-nodes N)
// SAME: dan-gen: error: --count 3 would write 3 identical matmul_4x4x4 kernels: the shape sets every field (m, n, k, tile) and matmul has no randomness of its own; leave a field unset for the seeds to draw, or drop --count
