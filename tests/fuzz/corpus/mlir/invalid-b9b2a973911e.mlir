func.func @compare_shape(%a: tensor<4xf32>) {
  %0 = kc.compare lt, %a, %a : tensor<4xf32> -> tensor<5xi1>
  return
}
