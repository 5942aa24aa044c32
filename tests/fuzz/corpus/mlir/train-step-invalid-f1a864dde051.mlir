func.func @forward(%w: tensor<3x2xf32> {kc.name = "w", kc.trainable = true}) -> tensor<3x2xf32> {
  return %w : tensor<3x2xf32>
}
