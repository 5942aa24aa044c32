func.func @conv_positive(%x: tensor<8x28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  %0 = kc.conv2d %x, %w {strides = array<i64: 0, 1>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}
