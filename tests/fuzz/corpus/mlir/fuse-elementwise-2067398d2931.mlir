func.func @user_before_consumer(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>)
    -> (tensor<64xf32>, tensor<64x32xf32>) {
  %0 = kc.mul %a, %b : tensor<64x32xf32>
  %1 = kc.exp %0 : tensor<64x32xf32>
  %2 = kc.reduce_sum %1 {axes = array<i64: 1>} : tensor<64x32xf32> -> tensor<64xf32>
  %3 = kc.add %1, %a : tensor<64x32xf32>
  return %2, %3 : tensor<64xf32>, tensor<64x32xf32>
}
