func.func @conv_backprop_filter(%x: tensor<8x28x28x1xf32>, %dy: tensor<8x28x28x32xf32>) {
  %0 = kc.conv2d_backprop_filter %x, %dy : tensor<8x28x28x1xf32>, tensor<8x28x28x32xf32> -> tensor<3x3x1x32xf32>
  return
}
