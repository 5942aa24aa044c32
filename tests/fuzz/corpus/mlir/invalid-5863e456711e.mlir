func.func @log_softmax_axis(%a: tensor<4x8xf32>) {
  %0 = kc.log_softmax %a {axis = -3 : i64} : tensor<4x8xf32>
  return
}
