// An elementwise chain on the vector unit: y = exp(a + b) * 2 - rowmax(a + b), fused
// into one kernel: a and b come in on MTE2, y leaves on MTE3, the rest stays in UB.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @chain(%a: memref<20x24xf16>, %b: memref<20x24xf16>, %y: memref<20x24xf16>) {
  %s = memref.alloc() : memref<20x24xf16>
  %e = memref.alloc() : memref<20x24xf16>
  %m = memref.alloc() : memref<20xf16>
  %two = arith.constant 2.0 : f16
  linalg.add ins(%a, %b : memref<20x24xf16>, memref<20x24xf16>) outs(%s : memref<20x24xf16>)
  linalg.exp ins(%s : memref<20x24xf16>) outs(%e : memref<20x24xf16>)
  linalg.reduce ins(%s : memref<20x24xf16>) outs(%m : memref<20xf16>) dimensions = [1]
    (%x: f16, %acc: f16) {
      %r = arith.maximumf %x, %acc : f16
      linalg.yield %r : f16
    }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %m : memref<20x24xf16>, memref<20xf16>) outs(%y : memref<20x24xf16>) {
    ^bb0(%x: f16, %mx: f16, %out: f16):
      %d = arith.mulf %x, %two : f16
      %r = arith.subf %d, %mx : f16
      linalg.yield %r : f16
  }
  memref.dealloc %s : memref<20x24xf16>
  memref.dealloc %e : memref<20x24xf16>
  memref.dealloc %m : memref<20xf16>
  return
}
