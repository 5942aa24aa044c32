func.func @pool_window(%x: tensor<8x26x26x32xf32>) {
  %0 = kc.avg_pool2d %x {window = array<i64: 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
  return
}
