func.func @step_not_unit(%s: tensor<i64> {kc.step = 0 : i64}) {
  return
}
