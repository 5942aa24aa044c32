func.func @broadcast_rank(%a: tensor<2x5xf32>) {
  %0 = kc.broadcast_to %a : tensor<2x5xf32> -> tensor<5xf32>
  return
}
