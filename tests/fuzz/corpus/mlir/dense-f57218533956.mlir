func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %b: tensor<2xf32> {kc.name = "dense/bias", kc.trainable = true},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %0 = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = kc.broadcast_to %b : tensor<2xf32> -> tensor<4x2xf32>
  %2 = kc.add %0, %1 : tensor<4x2xf32>
  %3 = kc.softmax %2 : tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}
