func.func @well_formed(%w: tensor<4xf32> {kc.name = "dense/kernel", kc.trainable = true},
                       %x: tensor<4xf32> {kc.input = 0 : i64},
                       %y: tensor<4xf32> {kc.name = "target", kc.target = 0 : i64},
                       %s: tensor<i64> {kc.step},
                       %arena: memref<64xi8> {kc.arena})
    -> (tensor<4xf32> {kc.name = "dense/kernel"})
    attributes {kc.train_step = {from_logits = false, inputs = 1 : i64, loss = "mean_squared_error", metrics = ["accuracy"], optimizer = "sgd", optimizer_state = 0 : i64, params = 1 : i64},
                kc.num_inputs = 5 : i64, kc.update_candidates = array<i64: 0, 0>, kc.in_place = array<i64>,
                kc.kernels = 3 : i64, kc.library_calls = 1 : i64, kc.loop_nests = 2 : i64,
                kc.arena_bytes = 64 : i64, kc.arena_lower_bound = 64 : i64, kc.arena_sum = 128 : i64, kc.arena_buffers = 2 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
  } {kc.fusion = {kind = "rows", layers = ["dense"], local_bytes = 16 : i64, ops = 2 : i64}, kc.parallel}
  return %w : tensor<4xf32>
}
