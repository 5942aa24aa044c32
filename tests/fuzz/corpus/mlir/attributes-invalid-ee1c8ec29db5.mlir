func.func @train_step_missing_field() attributes {kc.train_step = {inputs = 1 : i64, loss = "mse", metrics = [], optimizer = "sgd", optimizer_state = 0 : i64}} {
  return
}
