func.func @forward(%w: tensor<8x2xf32> {kc.name = "w", kc.trainable = true},
                   %x: tensor<4x8xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %dead = kc.constant dense<2.0> : tensor<4x2xf32>
  %a = kc.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %b = kc.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %c = kc.add %a, %b : tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}
