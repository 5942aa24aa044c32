func.func @concat_dims(%a: tensor<4x3xf32>, %b: tensor<5x3xf32>) {
  %0 = kc.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x6xf32>
  return
}
