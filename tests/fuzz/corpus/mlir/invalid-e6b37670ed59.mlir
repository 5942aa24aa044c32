func.func @avg_pool_grad_output(%dy: tensor<8x12x12x32xf32>) {
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x12x12x32xf32> -> tensor<8x26x26x32xf32>
  return
}
