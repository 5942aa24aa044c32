func.func @elementwise_dtype(%a: tensor<4xi32>) {
  %0 = kc.relu %a : tensor<4xi32>
  return
}
