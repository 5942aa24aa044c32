func.func @matmul_contraction(%a: tensor<32x784xf32>, %b: tensor<785x128xf32>) {
  %0 = kc.matmul %a, %b : tensor<32x784xf32>, tensor<785x128xf32> -> tensor<32x128xf32>
  return
}
