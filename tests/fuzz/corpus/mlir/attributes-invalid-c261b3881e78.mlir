func.func @unknown_on_argument(%x: tensor<4xf32> {kc.foo}) {
  return
}
