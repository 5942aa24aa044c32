func.func @max_pool_grad_result(%x: tensor<8x26x26x32xf32>, %dy: tensor<8x13x13x32xf32>) {
  %0 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32>, tensor<8x13x13x32xf32> -> tensor<8x26x26x16xf32>
  return
}
