// A chain of twenty 1x1 f16 convolutions over 32 channels of a 2x3 map, every second
// layer adding the map two layers back (a residual connection): one kernel of the conv
// family (4 channel groups of 96-byte blocks, CONV_ADD on the residual layers), within
// its stated deviation of the traced Conv_Case0 (which also has a depth-to-space step).
func.func @convs(%x: memref<1x32x2x3xf16>, %w0: memref<32x32x1x1xf16>, %w1: memref<32x32x1x1xf16>, %w2: memref<32x32x1x1xf16>, %w3: memref<32x32x1x1xf16>, %w4: memref<32x32x1x1xf16>, %w5: memref<32x32x1x1xf16>, %w6: memref<32x32x1x1xf16>, %w7: memref<32x32x1x1xf16>, %w8: memref<32x32x1x1xf16>, %w9: memref<32x32x1x1xf16>, %w10: memref<32x32x1x1xf16>, %w11: memref<32x32x1x1xf16>, %w12: memref<32x32x1x1xf16>, %w13: memref<32x32x1x1xf16>, %w14: memref<32x32x1x1xf16>, %w15: memref<32x32x1x1xf16>, %w16: memref<32x32x1x1xf16>, %w17: memref<32x32x1x1xf16>, %w18: memref<32x32x1x1xf16>, %w19: memref<32x32x1x1xf16>, %y: memref<1x32x2x3xf16>) {
  %c0 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w0 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c0 : memref<1x32x2x3xf16>)
  %c1 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c0, %w1 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c1 : memref<1x32x2x3xf16>)
  %r1 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c1, %x : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r1 : memref<1x32x2x3xf16>)
  %c2 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r1, %w2 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c2 : memref<1x32x2x3xf16>)
  %c3 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c2, %w3 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c3 : memref<1x32x2x3xf16>)
  %r3 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c3, %r1 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r3 : memref<1x32x2x3xf16>)
  %c4 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r3, %w4 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c4 : memref<1x32x2x3xf16>)
  %c5 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c4, %w5 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c5 : memref<1x32x2x3xf16>)
  %r5 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c5, %r3 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r5 : memref<1x32x2x3xf16>)
  %c6 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r5, %w6 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c6 : memref<1x32x2x3xf16>)
  %c7 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c6, %w7 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c7 : memref<1x32x2x3xf16>)
  %r7 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c7, %r5 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r7 : memref<1x32x2x3xf16>)
  %c8 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r7, %w8 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c8 : memref<1x32x2x3xf16>)
  %c9 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c8, %w9 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c9 : memref<1x32x2x3xf16>)
  %r9 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c9, %r7 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r9 : memref<1x32x2x3xf16>)
  %c10 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r9, %w10 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c10 : memref<1x32x2x3xf16>)
  %c11 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c10, %w11 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c11 : memref<1x32x2x3xf16>)
  %r11 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c11, %r9 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r11 : memref<1x32x2x3xf16>)
  %c12 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r11, %w12 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c12 : memref<1x32x2x3xf16>)
  %c13 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c12, %w13 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c13 : memref<1x32x2x3xf16>)
  %r13 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c13, %r11 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r13 : memref<1x32x2x3xf16>)
  %c14 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r13, %w14 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c14 : memref<1x32x2x3xf16>)
  %c15 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c14, %w15 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c15 : memref<1x32x2x3xf16>)
  %r15 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c15, %r13 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r15 : memref<1x32x2x3xf16>)
  %c16 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r15, %w16 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c16 : memref<1x32x2x3xf16>)
  %c17 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c16, %w17 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c17 : memref<1x32x2x3xf16>)
  %r17 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.add ins(%c17, %r15 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%r17 : memref<1x32x2x3xf16>)
  %c18 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%r17, %w18 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c18 : memref<1x32x2x3xf16>)
  %c19 = memref.alloc() : memref<1x32x2x3xf16>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%c18, %w19 : memref<1x32x2x3xf16>, memref<32x32x1x1xf16>) outs(%c19 : memref<1x32x2x3xf16>)
  linalg.add ins(%c19, %r17 : memref<1x32x2x3xf16>, memref<1x32x2x3xf16>) outs(%y : memref<1x32x2x3xf16>)
  memref.dealloc %c0 : memref<1x32x2x3xf16>
  memref.dealloc %c1 : memref<1x32x2x3xf16>
  memref.dealloc %r1 : memref<1x32x2x3xf16>
  memref.dealloc %c2 : memref<1x32x2x3xf16>
  memref.dealloc %c3 : memref<1x32x2x3xf16>
  memref.dealloc %r3 : memref<1x32x2x3xf16>
  memref.dealloc %c4 : memref<1x32x2x3xf16>
  memref.dealloc %c5 : memref<1x32x2x3xf16>
  memref.dealloc %r5 : memref<1x32x2x3xf16>
  memref.dealloc %c6 : memref<1x32x2x3xf16>
  memref.dealloc %c7 : memref<1x32x2x3xf16>
  memref.dealloc %r7 : memref<1x32x2x3xf16>
  memref.dealloc %c8 : memref<1x32x2x3xf16>
  memref.dealloc %c9 : memref<1x32x2x3xf16>
  memref.dealloc %r9 : memref<1x32x2x3xf16>
  memref.dealloc %c10 : memref<1x32x2x3xf16>
  memref.dealloc %c11 : memref<1x32x2x3xf16>
  memref.dealloc %r11 : memref<1x32x2x3xf16>
  memref.dealloc %c12 : memref<1x32x2x3xf16>
  memref.dealloc %c13 : memref<1x32x2x3xf16>
  memref.dealloc %r13 : memref<1x32x2x3xf16>
  memref.dealloc %c14 : memref<1x32x2x3xf16>
  memref.dealloc %c15 : memref<1x32x2x3xf16>
  memref.dealloc %r15 : memref<1x32x2x3xf16>
  memref.dealloc %c16 : memref<1x32x2x3xf16>
  memref.dealloc %c17 : memref<1x32x2x3xf16>
  memref.dealloc %r17 : memref<1x32x2x3xf16>
  memref.dealloc %c18 : memref<1x32x2x3xf16>
  memref.dealloc %c19 : memref<1x32x2x3xf16>
  return
}
