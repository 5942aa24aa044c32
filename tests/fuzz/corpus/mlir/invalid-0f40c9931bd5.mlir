func.func @reduce_keepdims(%a: tensor<4x8xf32>) {
  %0 = kc.reduce_mean %a {axes = array<i64: 1>, keepdims = true} : tensor<4x8xf32> -> tensor<4xf32>
  return
}
