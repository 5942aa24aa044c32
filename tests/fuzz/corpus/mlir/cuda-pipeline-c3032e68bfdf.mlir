func.func @conv_pool(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<2x2x2x4xf32> {
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.exp %0 : tensor<2x4x4x4xf32>
  %2 = kc.max_pool2d %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32> -> tensor<2x2x2x4xf32>
  return %2 : tensor<2x2x2x4xf32>
}
