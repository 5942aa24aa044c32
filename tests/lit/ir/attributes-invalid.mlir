// RUN: kcc-opt %s --split-input-file --verify-diagnostics

// Every kc.* attribute where passes put it, with the types they use: no
// diagnostics.
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

// -----

// expected-error @+1 {{'func.func' op argument #0: 'kc.name' expects a string attribute, got 1 : i64}}
func.func @name_not_string(%w: tensor<4xf32> {kc.name = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{result #0: 'kc.name' expects a string attribute, got true}}
func.func @result_name_not_string(%w: tensor<4xf32>) -> (tensor<4xf32> {kc.name = true}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result #0: 'kc.output_mask' expects a non-negative integer attribute, got -1 : i64}}
func.func @output_mask_negative(%m: tensor<4xf32>) -> (tensor<4xf32> {kc.output_mask = -1 : i64}) {
  return %m : tensor<4xf32>
}

// -----

// expected-error @+1 {{argument #0: 'kc.trainable' expects a bool attribute, got 1 : i64}}
func.func @trainable_not_bool(%w: tensor<4xf32> {kc.trainable = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'kc.input' expects a non-negative integer attribute, got -1 : i64}}
func.func @input_negative(%x: tensor<4xf32> {kc.input = -1 : i64}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'kc.input' expects a non-negative integer attribute, got true}}
func.func @input_bool(%x: tensor<4xf32> {kc.input = true}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'kc.target' expects an integer attribute, got "y"}}
func.func @target_not_integer(%y: tensor<4xf32> {kc.target = "y"}) {
  return
}

// -----

// expected-error @+1 {{argument #0: 'kc.step' expects a unit attribute, got 0 : i64}}
func.func @step_not_unit(%s: tensor<i64> {kc.step = 0 : i64}) {
  return
}

// -----

// expected-error @+1 {{result #0: 'kc.trainable' is not allowed on a function result, only on a function argument}}
func.func @trainable_on_result(%w: tensor<4xf32>) -> (tensor<4xf32> {kc.trainable = true}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op 'kc.in_place' expects (result, argument) pairs (an even number of indices), got array<i64: 0, 1, 2>}}
func.func @in_place_odd() attributes {kc.in_place = array<i64: 0, 1, 2>} {
  return
}

// -----

// expected-error @+1 {{'kc.update_candidates' expects a DenseI64ArrayAttr, got [0, 1]}}
func.func @update_candidates_not_array() attributes {kc.update_candidates = [0, 1]} {
  return
}

// -----

// expected-error @+1 {{'kc.arena_bytes' expects an integer attribute, got "64"}}
func.func @arena_bytes_not_integer() attributes {kc.arena_bytes = "64"} {
  return
}

// -----

// expected-error @+1 {{'kc.train_step' expects a 'params' field, got {inputs = 1 : i64, loss = "mse", metrics = [], optimizer = "sgd", optimizer_state = 0 : i64}}}
func.func @train_step_missing_field() attributes {kc.train_step = {inputs = 1 : i64, loss = "mse", metrics = [], optimizer = "sgd", optimizer_state = 0 : i64}} {
  return
}

// -----

// expected-error @+1 {{'kc.train_step' expects field 'metrics' to be an array of strings, got [1]}}
func.func @train_step_bad_metrics() attributes {kc.train_step = {inputs = 1 : i64, loss = "mse", metrics = [1 : i64], optimizer = "sgd", optimizer_state = 0 : i64, params = 1 : i64}} {
  return
}

// -----

// expected-error @+1 {{'kc.name' is not allowed on a function, only on a function argument or result}}
func.func @name_on_function() attributes {kc.name = "f"} {
  return
}

// -----

// expected-error @+1 {{'kc.fusion' is not allowed on a function, only on a loop}}
func.func @fusion_on_function() attributes {kc.fusion = {kind = "rows", layers = [], local_bytes = 0 : i64, ops = 1 : i64}} {
  return
}

// -----

func.func @parallel_not_unit() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'scf.for' op 'kc.parallel' expects a unit attribute, got true}}
  scf.for %i = %c0 to %c1 step %c1 {
  } {kc.parallel = true}
  return
}

// -----

func.func @fusion_on_other_op() {
  // expected-error @+1 {{'kc.fusion' is not allowed on 'arith.constant', only on a loop}}
  %c0 = arith.constant {kc.fusion = {kind = "rows", layers = [], local_bytes = 0 : i64, ops = 1 : i64}} 0 : index
  return
}

// -----

// expected-error @+1 {{unknown attribute 'kc.foo'; the kc attributes are kc.name, kc.trainable, kc.input, kc.target, kc.step, kc.arena, kc.updates, kc.added_loss, kc.output_mask, kc.train_step, kc.num_inputs, kc.update_candidates, kc.in_place, kc.kernels, kc.library_calls, kc.loop_nests, kc.arena_bytes, kc.arena_lower_bound, kc.arena_sum, kc.arena_buffers, kc.cold, kc.fusion, kc.parallel}}
func.func @unknown_on_function() attributes {kc.foo = 1 : i64} {
  return
}

// -----

// expected-error @+1 {{argument #0: unknown attribute 'kc.foo'}}
func.func @unknown_on_argument(%x: tensor<4xf32> {kc.foo}) {
  return
}
