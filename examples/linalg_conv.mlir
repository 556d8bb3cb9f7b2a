// A chain of twenty 1x1 f16 convolutions over 32 channels of a 2x3 map: one kernel of
// the conv family (4 channel groups of 96-byte blocks), within its stated deviation of
// the traced Conv_Case0 (which adds residual and depth-to-space steps).
func.func @convs(%x: memref<1x32x2x3xf16>, %w0: memref<32x32x1x1xf16>, %w1: memref<32x32x1x1xf16>, %w2: memref<32x32x1x1xf16>, %w3: memref<32x32x1x1xf16>, %w4: memref<32x32x1x1xf16>, %w5: memref<32x32x1x1xf16>, %w6: memref<32x32x1x1xf16>, %w7: memref<32x32x1x1xf16>, %w8: memref<32x32x1x1xf16>, %w9: memref<32x32x1x1xf16>, %w10: memref<32x32x1x1xf16>, %w11: memref<32x32x1x1xf16>, %w12: memref<32x32x1x1xf16>, %w13: memref<32x32x1x1xf16>, %w14: memref<32x32x1x1xf16>, %w15: memref<32x32x1x1xf16>, %w16: memref<32x32x1x1xf16>, %w17: memref<32x32x1x1xf16>, %w18: memref<32x32x1x1xf16>, %w19: memref<32x32x1x1xf16>, %y: memref<1x32x2x3xf16>) {
  %f0 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w0 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f0 : memref<1x32x2x3xf16>)
  %f1 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f0, %w1 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f1 : memref<1x32x2x3xf16>)
  %f2 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f1, %w2 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f2 : memref<1x32x2x3xf16>)
  %f3 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f2, %w3 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f3 : memref<1x32x2x3xf16>)
  %f4 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f3, %w4 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f4 : memref<1x32x2x3xf16>)
  %f5 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f4, %w5 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f5 : memref<1x32x2x3xf16>)
  %f6 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f5, %w6 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f6 : memref<1x32x2x3xf16>)
  %f7 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f6, %w7 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f7 : memref<1x32x2x3xf16>)
  %f8 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f7, %w8 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f8 : memref<1x32x2x3xf16>)
  %f9 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f8, %w9 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f9 : memref<1x32x2x3xf16>)
  %f10 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f9, %w10 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f10 : memref<1x32x2x3xf16>)
  %f11 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f10, %w11 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f11 : memref<1x32x2x3xf16>)
  %f12 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f11, %w12 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f12 : memref<1x32x2x3xf16>)
  %f13 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f12, %w13 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f13 : memref<1x32x2x3xf16>)
  %f14 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f13, %w14 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f14 : memref<1x32x2x3xf16>)
  %f15 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f14, %w15 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f15 : memref<1x32x2x3xf16>)
  %f16 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f15, %w16 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f16 : memref<1x32x2x3xf16>)
  %f17 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f16, %w17 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f17 : memref<1x32x2x3xf16>)
  %f18 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f17, %w18 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%f18 : memref<1x32x2x3xf16>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%f18, %w19 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%y : memref<1x32x2x3xf16>)
  memref.dealloc %f0 : memref<1x32x2x3xf16>
  memref.dealloc %f1 : memref<1x32x2x3xf16>
  memref.dealloc %f2 : memref<1x32x2x3xf16>
  memref.dealloc %f3 : memref<1x32x2x3xf16>
  memref.dealloc %f4 : memref<1x32x2x3xf16>
  memref.dealloc %f5 : memref<1x32x2x3xf16>
  memref.dealloc %f6 : memref<1x32x2x3xf16>
  memref.dealloc %f7 : memref<1x32x2x3xf16>
  memref.dealloc %f8 : memref<1x32x2x3xf16>
  memref.dealloc %f9 : memref<1x32x2x3xf16>
  memref.dealloc %f10 : memref<1x32x2x3xf16>
  memref.dealloc %f11 : memref<1x32x2x3xf16>
  memref.dealloc %f12 : memref<1x32x2x3xf16>
  memref.dealloc %f13 : memref<1x32x2x3xf16>
  memref.dealloc %f14 : memref<1x32x2x3xf16>
  memref.dealloc %f15 : memref<1x32x2x3xf16>
  memref.dealloc %f16 : memref<1x32x2x3xf16>
  memref.dealloc %f17 : memref<1x32x2x3xf16>
  memref.dealloc %f18 : memref<1x32x2x3xf16>
  return
}
