func.func @transpose_perm(%a: tensor<2x3xf32>) {
  %0 = kc.transpose %a {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
