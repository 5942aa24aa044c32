func.func @name_not_string(%w: tensor<4xf32> {kc.name = 1 : i64}) {
  return
}
