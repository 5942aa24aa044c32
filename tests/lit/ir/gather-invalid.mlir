// RUN: kcc-opt %s --split-input-file --verify-diagnostics

func.func @gather_result(%t: tensor<5x3xf32>, %i: tensor<2x4xi32>) {
  // expected-error @+1 {{'kc.gather' op result shape [2, 3, 3] does not match the expected [2, 4, 3]}}
  %0 = kc.gather %t, %i : tensor<5x3xf32>, tensor<2x4xi32> -> tensor<2x3x3xf32>
  return
}

// -----

func.func @gather_dtype(%t: tensor<5x3xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{expects element type 'f32' to match 'f64'}}
  %0 = kc.gather %t, %i : tensor<5x3xf32>, tensor<4xi32> -> tensor<4x3xf64>
  return
}

// -----

func.func @gather_float_indices(%t: tensor<5x3xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{operand #1 must be}}
  %0 = kc.gather %t, %i : tensor<5x3xf32>, tensor<4xf32> -> tensor<4x3xf32>
  return
}

// -----

func.func @gather_grad_rows(%i: tensor<4xi64>, %g: tensor<4x2xf32>) {
  // expected-error @+1 {{'kc.gather_grad' op grad_output shape [4, 2] does not match the expected [4, 3]}}
  %0 = kc.gather_grad %i, %g : tensor<4xi64>, tensor<4x2xf32> -> tensor<9x3xf32>
  return
}
