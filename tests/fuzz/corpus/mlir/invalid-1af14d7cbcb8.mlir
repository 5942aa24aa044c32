func.func @cast_shape(%a: tensor<4xf32>) {
  %0 = kc.cast %a : tensor<4xf32> -> tensor<5xf64>
  return
}
