// RUN: xdsl-opt %s --split-input-file -p convert-linalg-to-dan | filecheck %s
// RUN: dan-opt %s --split-input-file -p convert-linalg-to-dan | filecheck %s
// RUN: dan-opt %s --split-input-file -p 'convert-linalg-to-dan{target=ascend910b}' | filecheck %s --check-prefix=BIG

// Test that a linalg.matmul becomes a dan.kernel of the matmul family in its program
// order (per C tile: the L0C accumulator, per k step the L1 loads on MTE2, the L0A/L0B
// moves on MTE1 and the MATMUL on CUBE, then the FIXP copy-out), tiled 8x8 for f16 on
// the contest core (128-byte tiles, 256-byte f32 accumulators), and that the function
// keeps a dan.launch of it where the matmul stood. A ragged shape gets ragged tiles,
// a larger core takes one tile, a batched matmul runs its matmuls in turn.

// CHECK:      dan.kernel @mm_matmul0 attributes {target = #dan.target<contest>} {
// CHECK-NEXT:   %b0, %t0 = dan.alloc {id = 0, buf = 0} : !dan.buf<L0C, 256>
// CHECK-NEXT:   %b1, %t1 = dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 128>
// CHECK-NEXT:   %b2, %t2 = dan.alloc {id = 2, buf = 2} : !dan.buf<L1, 128>
// CHECK-NEXT:   %t3 = dan.dma "COPY_IN" on MTE2 cycles(325) bufs(%b1) after(%t1) {id = 3}
// CHECK-NEXT:   %t4 = dan.dma "COPY_IN" on MTE2 cycles(325) bufs(%b2) after(%t2) {id = 4}
// CHECK-NEXT:   %b3, %t5 = dan.alloc {id = 5, buf = 3} : !dan.buf<L0A, 128>
// CHECK-NEXT:   %b4, %t6 = dan.alloc {id = 6, buf = 4} : !dan.buf<L0B, 128>
// CHECK-NEXT:   %t7 = dan.dma "MOVE" on MTE1 cycles(31) bufs(%b3, %b1) after(%t3, %t5) {id = 7}
// CHECK-NEXT:   %t8 = dan.dma "MOVE" on MTE1 cycles(31) bufs(%b4, %b2) after(%t4, %t6) {id = 8}
// CHECK-NEXT:   %t9 = dan.compute "MATMUL" on CUBE cycles(128) bufs(%b0, %b4, %b3) after(%t0, %t7, %t8) {id = 9}
// CHECK:        %t18 = dan.compute "MATMUL" on CUBE cycles(128) bufs(%b0, %b8, %b7) after(%t9, %t16, %t17) {id = 18}
// CHECK-NEXT:   %t19 = dan.dma "COPY_OUT" on FIXP cycles(263) bufs(%b0) after(%t18) {id = 19}
// CHECK:        %t28 = dan.free %b8 after(%t15, %t18) {id = 28}
// CHECK-NEXT: }
// CHECK-NEXT: func.func @mm(%a: memref<8x16xf16>, %b: memref<16x8xf16>, %c: memref<8x8xf16>) {
// CHECK-NEXT:   dan.launch @mm_matmul0(%a, %b, %c) {lowered = "linalg.matmul"} : memref<8x16xf16>, memref<16x8xf16>, memref<8x8xf16>
// CHECK-NEXT:   func.return

// BIG:      dan.kernel @mm_matmul0 attributes {target = #dan.target<ascend910b>} {
// BIG-NEXT:   dan.alloc {id = 0, buf = 0} : !dan.buf<L0C, 256>
// BIG-NEXT:   dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 256>

func.func @mm(%a: memref<8x16xf16>, %b: memref<16x8xf16>, %c: memref<8x8xf16>) {
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x8xf16>) outs(%c : memref<8x8xf16>)
  return
}

// -----

// A 10x8x12 f32 matmul: 4x4 f32 tiles (64 bytes), the last row of tiles ragged
// (2 rows: 32 bytes).

// CHECK-LABEL: dan.kernel @ragged_matmul0
// CHECK:         dan.alloc {id = 0, buf = 0} : !dan.buf<L0C, 64>
// CHECK-NEXT:    dan.alloc {id = 1, buf = 1} : !dan.buf<L1, 64>
// CHECK:         dan.alloc {{.*}} : !dan.buf<L1, 32>
// CHECK:         dan.launch @ragged_matmul0(%a, %b, %c) {lowered = "linalg.matmul"} : memref<10x8xf32>, memref<8x12xf32>, memref<10x12xf32>

func.func @ragged(%a: memref<10x8xf32>, %b: memref<8x12xf32>, %c: memref<10x12xf32>) {
  linalg.matmul ins(%a, %b : memref<10x8xf32>, memref<8x12xf32>) outs(%c : memref<10x12xf32>)
  return
}

// -----

// A batched matmul written as a linalg.generic (batch, m, n parallel; k reduction;
// the body a multiply and an add into the output) runs its three matmuls in turn in
// one kernel: 3 x (2 row tiles x 3 k steps) MATMULs.

// CHECK-LABEL: dan.kernel @bmm_matmul0
// CHECK-COUNT-18: dan.compute "MATMUL" on CUBE cycles(128)
// CHECK-NOT:     "MATMUL"
// CHECK:         dan.launch @bmm_matmul0(%x, %y, %z) {lowered = "linalg.generic"}

#a = affine_map<(b, m, n, k) -> (b, m, k)>
#b = affine_map<(b, m, n, k) -> (b, k, n)>
#c = affine_map<(b, m, n, k) -> (b, m, n)>
func.func @bmm(%x: memref<3x16x24xf16>, %y: memref<3x24x8xf16>, %z: memref<3x16x8xf16>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<3x16x24xf16>, memref<3x24x8xf16>) outs(%z : memref<3x16x8xf16>) {
  ^bb0(%p: f16, %q: f16, %acc: f16):
    %m = arith.mulf %p, %q : f16
    %s = arith.addf %acc, %m : f16
    linalg.yield %s : f16
  }
  return
}

// -----

// A fill of the output before the matmul initialises the accumulators, which the
// family starts without a load: it lowers with the matmul (the constant is left to dce).

// CHECK-LABEL: dan.kernel @filled_matmul0
// CHECK:       func.func @filled
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f16
// CHECK-NEXT:    dan.launch @filled_matmul0(%a, %b, %c) {lowered = "linalg.fill+linalg.matmul"}
// CHECK-NEXT:    func.return

func.func @filled(%a: memref<8x16xf16>, %b: memref<16x8xf16>, %c: memref<8x8xf16>) {
  %zero = arith.constant 0.0 : f16
  linalg.fill ins(%zero : f16) outs(%c : memref<8x8xf16>)
  linalg.matmul ins(%a, %b : memref<8x16xf16>, memref<16x8xf16>) outs(%c : memref<8x8xf16>)
  return
}
