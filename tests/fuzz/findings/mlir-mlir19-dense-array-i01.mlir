func.func @mean_keepdims(%x: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %0 = kc.reduce_mean %x {eqaxes = array<i01: 1>, keepdims = true} : tensor<4x5xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}
