func.func @select_cond(%c: tensor<3xi1>, %a: tensor<4xf32>) {
  %0 = kc.select %c, %a, %a : tensor<3xi1>, tensor<4xf32>
  return
}
