func.func @broadcast_dim(%a: tensor<2x5xf32>) {
  %0 = kc.broadcast_to %a : tensor<2x5xf32> -> tensor<3x5xf32>
  return
}
