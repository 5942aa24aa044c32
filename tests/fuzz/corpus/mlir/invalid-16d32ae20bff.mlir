func.func @pool_rank(%x: tensor<26x26x32xf32>) {
  %0 = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<26x26x32xf32> -> tensor<13x13x32xf32>
  return
}
