// An elementwise chain on the vector unit: y = exp(a + b) * 2 - rowmax(a + b), each op
// one kernel in UB with MTE2 loads and MTE3 stores (a ragged 20x36 f32 shape).
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @chain(%a: memref<20x36xf32>, %b: memref<20x36xf32>, %y: memref<20x36xf32>) {
  %s = memref.alloc() : memref<20x36xf32>
  %e = memref.alloc() : memref<20x36xf32>
  %m = memref.alloc() : memref<20xf32>
  %two = arith.constant 2.0 : f32
  linalg.add ins(%a, %b : memref<20x36xf32>, memref<20x36xf32>) outs(%s : memref<20x36xf32>)
  linalg.exp ins(%s : memref<20x36xf32>) outs(%e : memref<20x36xf32>)
  linalg.reduce ins(%s : memref<20x36xf32>) outs(%m : memref<20xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %r = arith.maximumf %x, %acc : f32
      linalg.yield %r : f32
    }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %m : memref<20x36xf32>, memref<20xf32>) outs(%y : memref<20x36xf32>) {
    ^bb0(%x: f32, %mx: f32, %out: f32):
      %d = arith.mulf %x, %two : f32
      %r = arith.subf %d, %mx : f32
      linalg.yield %r : f32
  }
  memref.dealloc %s : memref<20x36xf32>
  memref.dealloc %e : memref<20x36xf32>
  memref.dealloc %m : memref<20xf32>
  return
}
