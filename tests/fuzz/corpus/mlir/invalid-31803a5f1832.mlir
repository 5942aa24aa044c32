func.func @argmax_axis(%a: tensor<4x8xf32>) {
  %0 = kc.argmax %a {axis = -3 : i64} : tensor<4x8xf32> -> tensor<4xi64>
  return
}
