func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %s: tensor<2xf32> {kc.name = "norm/moving_mean", kc.trainable = false},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64},
                   %step: tensor<i64> {kc.step}) -> tensor<4x2xf32> {
  %0 = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = kc.broadcast_to %s : tensor<2xf32> -> tensor<4x2xf32>
  %2 = kc.sub %0, %1 : tensor<4x2xf32>
  %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<4x2xf32>
  %3 = kc.mul %2, %u : tensor<4x2xf32>
  %4 = kc.softmax %3 : tensor<4x2xf32>
  return %4 : tensor<4x2xf32>
}
