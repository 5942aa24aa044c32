func.func @trainable_not_bool(%w: tensor<4xf32> {kc.trainable = 1 : i64}) {
  return
}
