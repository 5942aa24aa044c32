func.func @one_hot_rank(%a: tensor<4xi32>) {
  %0 = kc.one_hot %a : tensor<4xi32> -> tensor<4xf32>
  return
}
