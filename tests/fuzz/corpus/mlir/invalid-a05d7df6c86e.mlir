func.func @matmul_result(%a: tensor<32x784xf32>, %b: tensor<784x128xf32>) {
  %0 = kc.matmul %a, %b : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x64xf32>
  return
}
