func.func @dense(%x: tensor<32x784xf32>, %w: tensor<784x128xf32>, %dy: tensor<32x128xf32>) -> (tensor<32x128xf32>, tensor<32x784xf32>, tensor<784x128xf32>) {
  %y = kc.matmul %x, %w : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32>
  %dx = kc.matmul %dy, %w {transpose_rhs = true} : tensor<32x128xf32>, tensor<784x128xf32> -> tensor<32x784xf32>
  %dw = kc.matmul %x, %dy {transpose_lhs = true} : tensor<32x784xf32>, tensor<32x128xf32> -> tensor<784x128xf32>
  return %y, %dx, %dw : tensor<32x128xf32>, tensor<32x784xf32>, tensor<784x128xf32>
}
func.func @softmax(%x: tensor<32x10xf32>) -> (tensor<32x10xf32>, tensor<32x10xf32>) {
  %p = kc.softmax %x : tensor<32x10xf32>
  %l = kc.log_softmax %x {axis = 0 : i64} : tensor<32x10xf32>
  return %p, %l : tensor<32x10xf32>, tensor<32x10xf32>
}
func.func @conv(%x: tensor<8x28x28x1xf32>, %w: tensor<3x3x1x32xf32>, %dy: tensor<8x14x14x32xf32>) -> (tensor<8x14x14x32xf32>, tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<8x24x24x32xf32>) {
  %y = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x14x14x32xf32>
  %dx = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x14x14x32xf32>, tensor<3x3x1x32xf32> -> tensor<8x28x28x1xf32>
  %dw = kc.conv2d_backprop_filter %x, %dy {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<8x14x14x32xf32> -> tensor<3x3x1x32xf32>
  %d = kc.conv2d %x, %w {dilations = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x24x24x32xf32>
  return %y, %dx, %dw, %d : tensor<8x14x14x32xf32>, tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<8x24x24x32xf32>
}
func.func @pool(%x: tensor<8x26x26x32xf32>, %dy: tensor<8x13x13x32xf32>) -> (tensor<8x13x13x32xf32>, tensor<8x13x13x32xf32>, tensor<8x26x26x32xf32>, tensor<8x26x26x32xf32>) {
  %m = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
  %a = kc.avg_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
  %dm = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32>, tensor<8x13x13x32xf32> -> tensor<8x26x26x32xf32>
  %da = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x13x13x32xf32> -> tensor<8x26x26x32xf32>
  return %m, %a, %dm, %da : tensor<8x13x13x32xf32>, tensor<8x13x13x32xf32>, tensor<8x26x26x32xf32>, tensor<8x26x26x32xf32>
}
func.func @random(%step: tensor<i64>) -> tensor<32x128xf32> {
  %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<32x128xf32>
  return %u : tensor<32x128xf32>
}
