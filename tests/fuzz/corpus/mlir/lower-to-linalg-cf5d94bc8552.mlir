func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %0 = kc.softmax %x : tensor<2x10xf32>
  return %0 : tensor<2x10xf32>
}
