func.func @pool_grad_relu(%x: tensor<2x4x4x3xf32>, %dy: tensor<2x2x2x3xf32>) -> tensor<2x4x4x3xf32> {
  %0 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  %zero = arith.constant dense<0.0> : tensor<2x4x4x3xf32>
  %1 = kc.compare gt, %x, %zero : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xi1>
  %2 = kc.select %1, %0, %zero : tensor<2x4x4x3xi1>, tensor<2x4x4x3xf32>
  return %2 : tensor<2x4x4x3xf32>
}
