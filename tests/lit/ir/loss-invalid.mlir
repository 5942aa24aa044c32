// RUN: kcc-opt %s --split-input-file --verify-diagnostics

func.func @ctc_logits_rank(%x: tensor<4x6xf32>, %l: tensor<4x7xi32>) {
  // expected-error @+1 {{expects logits [batch, steps, classes], got [4, 6]}}
  %0 = kc.ctc_loss %x, %l : tensor<4x6xf32>, tensor<4x7xi32> -> tensor<4xf32>
  return
}

// -----

func.func @ctc_labels_batch(%x: tensor<4x20x6xf32>, %l: tensor<3x7xi32>) {
  // expected-error @+1 {{expects labels [4, max_label_length], got [3, 7]}}
  %0 = kc.ctc_loss %x, %l : tensor<4x20x6xf32>, tensor<3x7xi32> -> tensor<4xf32>
  return
}

// -----

func.func @ctc_result(%x: tensor<4x20x6xf32>, %l: tensor<4x7xi32>) {
  // expected-error @+1 {{result shape [4, 1] does not match the expected [4]}}
  %0 = kc.ctc_loss %x, %l : tensor<4x20x6xf32>, tensor<4x7xi32> -> tensor<4x1xf32>
  return
}

// -----

func.func @ctc_labels_type(%x: tensor<4x20x6xf32>, %l: tensor<4x7xi64>) {
  // expected-error @+1 {{operand #1 must be statically shaped tensor of 32-bit signless integer values}}
  %0 = kc.ctc_loss %x, %l : tensor<4x20x6xf32>, tensor<4x7xi64> -> tensor<4xf32>
  return
}

// -----

func.func @ctc_grad_output(%x: tensor<4x20x6xf32>, %l: tensor<4x7xi32>, %g: tensor<3xf32>) {
  // expected-error @+1 {{grad_output shape [3] does not match the expected [4]}}
  %0 = kc.ctc_loss_grad %x, %l, %g : tensor<4x20x6xf32>, tensor<4x7xi32>, tensor<3xf32> -> tensor<4x20x6xf32>
  return
}
