func.func @target_not_integer(%y: tensor<4xf32> {kc.target = "y"}) {
  return
}
