func.func @matmul_rank(%a: tensor<2x32x784xf32>, %b: tensor<784x128xf32>) {
  %0 = kc.matmul %a, %b : tensor<2x32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32>
  return
}
