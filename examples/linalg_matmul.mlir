// A 64x64x64 f16 matmul: `convert-linalg-to-dan` lowers it to the traced Matmul_Case0
// kernel (8x8 f16 tiles, f32 accumulators in L0C).
func.func @matmul(%a: memref<64x64xf16>, %b: memref<64x64xf16>, %c: memref<64x64xf16>) {
  linalg.matmul ins(%a, %b : memref<64x64xf16>, memref<64x64xf16>) outs(%c : memref<64x64xf16>)
  return
}
