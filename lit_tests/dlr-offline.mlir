// RUN: dan-opt %s -p 'dlr' | filecheck %s --check-prefix=ONLINE
// RUN: dan-opt %s -p 'dlr{packing=offline},verify-plan' | filecheck %s --check-prefix=OFFLINE
// RUN: not dan-opt %s -p 'dlr{packing=later}' 2>&1 | filecheck %s --check-prefix=BAD

// Test that a layout the scan fragments is packed offline without a spill. Live bytes
// never exceed L1 (4096): b0 (1024) and b2 (1024) die before b3 (2048) arrives, but the
// scan put b1 (2048) between them, so the two free holes of 1024 cannot hold b3 and the
// scan spills. Knowing every lifetime up front, the packer puts b1 at one end and b0
// and b2 beside it, where b3 then fits.

// ONLINE-LABEL: dan.kernel @frag
// ONLINE: dan.spill_out
// OFFLINE-LABEL: dan.kernel @frag
// OFFLINE: %b0, %t0 = dan.alloc {id = 0, buf = 0, offset = 2048} : !dan.buf<L1, 1024>
// OFFLINE: %b1, %t2 = dan.alloc {id = 2, buf = 1, offset = 0} : !dan.buf<L1, 2048>
// OFFLINE: %b2, %t4 = dan.alloc {id = 4, buf = 2, offset = 3072} : !dan.buf<L1, 1024>
// OFFLINE: %b3, %t10 = dan.alloc {id = 10, buf = 3, offset = 2048} : !dan.buf<L1, 2048>
// OFFLINE-NOT: dan.spill_out
// BAD: option 'packing' of pass 'dlr': unknown value 'later' (valid: online, offline)

builtin.module {
  dan.kernel @frag attributes {target = #dan.target<contest>} {
    %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<L1, 1024>
    %t1 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b0) after(%t0) {id = 1}
    %b1, %t2 = dan.alloc {id = 2, buf = 1} : !dan.buf<L1, 2048>
    %t3 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b1) after(%t2) {id = 3}
    %b2, %t4 = dan.alloc {id = 4, buf = 2} : !dan.buf<L1, 1024>
    %t5 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b2) after(%t4) {id = 5}
    %t6 = dan.dma "COPY_OUT" on MTE3 cycles(100) bufs(%b0) after(%t1) {id = 6}
    %t7 = dan.free %b0 after(%t6) {id = 7}
    %t8 = dan.dma "COPY_OUT" on MTE3 cycles(100) bufs(%b2) after(%t5) {id = 8}
    %t9 = dan.free %b2 after(%t8) {id = 9}
    %b3, %t10 = dan.alloc {id = 10, buf = 3} : !dan.buf<L1, 2048>
    %t11 = dan.dma "COPY_IN" on MTE2 cycles(100) bufs(%b3) after(%t10) {id = 11}
    %t12 = dan.dma "COPY_OUT" on MTE3 cycles(100) bufs(%b1) after(%t3) {id = 12}
    %t13 = dan.free %b1 after(%t12) {id = 13}
    %t14 = dan.dma "COPY_OUT" on MTE3 cycles(100) bufs(%b3) after(%t11) {id = 14}
    %t15 = dan.free %b3 after(%t14) {id = 15}
  }
}
