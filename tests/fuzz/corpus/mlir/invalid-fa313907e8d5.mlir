func.func @concat_rank(%a: tensor<4x3xf32>, %b: tensor<4xf32>) {
  %0 = kc.concat %a, %b {axis = 0 : i64} : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<8x3xf32>
  return
}
