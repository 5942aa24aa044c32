func.func @reduce_axes_order(%a: tensor<4x8xf32>) {
  %0 = kc.reduce_sum %a {axes = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<f32>
  return
}
