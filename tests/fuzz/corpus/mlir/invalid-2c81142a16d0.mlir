func.func @broadcast_dtype(%a: tensor<5xf32>) {
  %0 = kc.broadcast_to %a : tensor<5xf32> -> tensor<3x5xf64>
  return
}
