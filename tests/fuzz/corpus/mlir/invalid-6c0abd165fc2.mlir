func.func @conv_window(%x: tensor<1x2x2x1xf32>, %w: tensor<3x3x1x4xf32>) {
  %0 = kc.conv2d %x, %w : tensor<1x2x2x1xf32>, tensor<3x3x1x4xf32> -> tensor<1x1x1x4xf32>
  return
}
