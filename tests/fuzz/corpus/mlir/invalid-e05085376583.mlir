func.func @concat_axis(%a: tensor<4x3xf32>) {
  %0 = kc.concat %a {axis = 2 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}
