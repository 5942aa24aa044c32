func.func @train_step_bad_metrics() attributes {kc.train_step = {inputs = 1 : i64, loss = "mse", metrics = [1 : i64], optimizer = "sgd", optimizer_state = 0 : i64, params = 1 : i64}} {
  return
}
