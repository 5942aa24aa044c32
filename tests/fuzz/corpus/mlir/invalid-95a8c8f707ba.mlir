func.func @reduce_axis_range(%a: tensor<4x8xf32>) {
  %0 = kc.reduce_max %a {axes = array<i64: 2>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
