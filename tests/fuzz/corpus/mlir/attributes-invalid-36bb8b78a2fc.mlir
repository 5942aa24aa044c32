func.func @input_negative(%x: tensor<4xf32> {kc.input = -1 : i64}) {
  return
}
