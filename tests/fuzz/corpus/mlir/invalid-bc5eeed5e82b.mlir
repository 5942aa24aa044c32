func.func @reshape_count(%a: tensor<2x3xf32>) {
  %0 = kc.reshape %a : tensor<2x3xf32> -> tensor<4xf32>
  return
}
