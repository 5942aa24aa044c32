// RUN: kcc-opt %s --split-input-file --verify-diagnostics

// An LSTM of 3 units over 10 steps, batch 2: kernel [H, 4H], initial state
// [B, 2H] (h and c), states [T, B, 6H], x [T, B, 4H] (the input projection).

func.func @unknown_cell(%x: tensor<10x2x12xf32>, %u: tensor<3x12xf32>, %h0: tensor<2x6xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'kc.recurrence' op unknown cell 'peephole'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "peephole"} : tensor<10x2x12xf32>, tensor<3x12xf32>, tensor<2x6xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  return
}

// -----

func.func @unsupported_activation(%x: tensor<10x2x12xf32>, %u: tensor<3x12xf32>, %h0: tensor<2x6xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'kc.recurrence' op unsupported activation 'softmax'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm", activation = "softmax"} : tensor<10x2x12xf32>, tensor<3x12xf32>, tensor<2x6xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  return
}

// -----

func.func @kernel_gates(%x: tensor<10x2x12xf32>, %u: tensor<3x9xf32>, %h0: tensor<2x6xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'kc.recurrence' op expects kernel of shape 3x12, got 'tensor<3x9xf32>'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm"} : tensor<10x2x12xf32>, tensor<3x9xf32>, tensor<2x6xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  return
}

// -----

func.func @lstm_state_without_c(%x: tensor<10x2x12xf32>, %u: tensor<3x12xf32>, %h0: tensor<2x3xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'kc.recurrence' op expects initial_state of shape 2x6, got 'tensor<2x3xf32>'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm"} : tensor<10x2x12xf32>, tensor<3x12xf32>, tensor<2x3xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  return
}

// -----

func.func @steps_mismatch(%x: tensor<9x2x12xf32>, %u: tensor<3x12xf32>, %h0: tensor<2x6xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'kc.recurrence' op expects x of shape 10x2x12, got 'tensor<9x2x12xf32>'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm"} : tensor<9x2x12xf32>, tensor<3x12xf32>, tensor<2x6xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  return
}

// -----

func.func @batch_mismatch(%x: tensor<10x4x12xf32>, %u: tensor<3x12xf32>, %h0: tensor<2x6xf32>, %b: tensor<12xf32>) {
  // expected-error @+1 {{'kc.recurrence' op expects x of shape 10x2x12, got 'tensor<10x4x12xf32>'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm"} : tensor<10x4x12xf32>, tensor<3x12xf32>, tensor<2x6xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  return
}

// -----

func.func @recurrent_bias(%x: tensor<10x2x12xf32>, %u: tensor<3x12xf32>, %h0: tensor<2x6xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'kc.recurrence' op expects recurrent_bias of shape 12, got 'tensor<3xf32>'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm"} : tensor<10x2x12xf32>, tensor<3x12xf32>, tensor<2x6xf32>, tensor<3xf32> -> tensor<10x2x18xf32>
  return
}

// -----

// GRU, 3 units: with reset_after the states keep h.U + b too (5H), without
// it 4H.
func.func @gru_reset_before_width(%x: tensor<10x2x9xf32>, %u: tensor<3x9xf32>, %h0: tensor<2x3xf32>, %b: tensor<9xf32>) {
  // expected-error @+1 {{'kc.recurrence' op expects states of shape 10x2x12, got 'tensor<10x2x15xf32>'}}
  %s = kc.recurrence %x, %u, %h0, %b {cell = "gru", reset_after = false} : tensor<10x2x9xf32>, tensor<3x9xf32>, tensor<2x3xf32>, tensor<9xf32> -> tensor<10x2x15xf32>
  return
}

// -----

func.func @grad_states(%u: tensor<3x12xf32>, %h0: tensor<2x6xf32>, %s: tensor<10x2x18xf32>, %ds: tensor<9x2x18xf32>) {
  // expected-error @+1 {{'kc.recurrence_grad' op expects grad_states of shape 10x2x18, got 'tensor<9x2x18xf32>'}}
  %g = kc.recurrence_grad %u, %h0, %s, %ds {cell = "lstm"} : tensor<3x12xf32>, tensor<2x6xf32>, tensor<10x2x18xf32>, tensor<9x2x18xf32> -> tensor<1xf32>
  return
}
