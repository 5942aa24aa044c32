func.func @result_name_not_string(%w: tensor<4xf32>) -> (tensor<4xf32> {kc.name = true}) {
  return %w : tensor<4xf32>
}
