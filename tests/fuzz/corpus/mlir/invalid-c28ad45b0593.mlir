func.func @one_hot_leading(%a: tensor<4xi32>) {
  %0 = kc.one_hot %a : tensor<4xi32> -> tensor<5x10xf32>
  return
}
