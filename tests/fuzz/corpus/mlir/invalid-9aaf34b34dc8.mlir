func.func @conv_rank(%x: tensor<28x28x1xf32>, %w: tensor<3x3x1x32xf32>) {
  %0 = kc.conv2d %x, %w : tensor<28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
  return
}
