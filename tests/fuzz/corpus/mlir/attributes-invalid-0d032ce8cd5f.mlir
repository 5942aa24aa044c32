func.func @trainable_on_result(%w: tensor<4xf32>) -> (tensor<4xf32> {kc.trainable = true}) {
  return %w : tensor<4xf32>
}
