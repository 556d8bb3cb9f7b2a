// Attention in linalg: S = Q KT, softmax over rows (max, subtract, exp, sum, divide),
// O = P V. `convert-linalg-to-dan` recognises the pattern and lowers it as the
// flash-attention family: with these shapes, the traced FlashAttention_Case0 kernel.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @attention(%q: memref<32x16xf16>, %kt: memref<16x32xf16>, %v: memref<32x16xf16>, %o: memref<32x16xf16>) {
  %s = memref.alloc() : memref<32x32xf16>
  %m = memref.alloc() : memref<32xf16>
  %p = memref.alloc() : memref<32x32xf16>
  %l = memref.alloc() : memref<32xf16>
  linalg.matmul ins(%q, %kt : memref<32x16xf16>, memref<16x32xf16>) outs(%s : memref<32x32xf16>)
  linalg.reduce ins(%s : memref<32x32xf16>) outs(%m : memref<32xf16>) dimensions = [1]
    (%x: f16, %acc: f16) {
      %r = arith.maximumf %x, %acc : f16
      linalg.yield %r : f16
    }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %m : memref<32x32xf16>, memref<32xf16>) outs(%p : memref<32x32xf16>) {
    ^bb0(%x: f16, %mx: f16, %out: f16):
      %d = arith.subf %x, %mx : f16
      linalg.yield %d : f16
  }
  linalg.exp ins(%p : memref<32x32xf16>) outs(%p : memref<32x32xf16>)
  linalg.reduce ins(%p : memref<32x32xf16>) outs(%l : memref<32xf16>) dimensions = [1]
    (%x: f16, %acc: f16) {
      %r = arith.addf %x, %acc : f16
      linalg.yield %r : f16
    }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %l : memref<32x32xf16>, memref<32xf16>) outs(%p : memref<32x32xf16>) {
    ^bb0(%x: f16, %sum: f16, %out: f16):
      %d = arith.divf %x, %sum : f16
      linalg.yield %d : f16
  }
  linalg.matmul ins(%p, %v : memref<32x32xf16>, memref<32x16xf16>) outs(%o : memref<32x16xf16>)
  memref.dealloc %s : memref<32x32xf16>
  memref.dealloc %m : memref<32xf16>
  memref.dealloc %p : memref<32x32xf16>
  memref.dealloc %l : memref<32xf16>
  return
}
