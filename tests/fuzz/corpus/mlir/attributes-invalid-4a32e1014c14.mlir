func.func @input_bool(%x: tensor<4xf32> {kc.input = true}) {
  return
}
