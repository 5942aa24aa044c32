func.func @conv(%x: tensor<1x8x8x3xf64>, %w: tensor<3x3x3x2xf64>) -> tensor<1x4x4x2xf64> {
  %0 = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<1x8x8x3xf64>, tensor<3x3x3x2xf64> -> tensor<1x4x4x2xf64>
  return %0 : tensor<1x4x4x2xf64>
}
