func.func @conv_bias(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = kc.add %0, %1 : tensor<2x4x4x4xf32>
  return %2 : tensor<2x4x4x4xf32>
}
