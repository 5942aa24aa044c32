// RUN: kcc-opt %s --split-input-file --verify-diagnostics --kc-build-train-step="loss=categorical_crossentropy"
// RUN: not kcc-opt %s --split-input-file --kc-build-train-step="optimizer=ftrl" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not kcc-opt %s --split-input-file --kc-build-train-step="metrics=f1" 2>&1 | FileCheck %s --check-prefix=METRIC
// RUN: not kcc-opt %s --split-input-file --kc-train-pipeline="optimizer=ftrl" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not kcc-opt %s --split-input-file --kc-build-train-step="momentum=1.5" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kcc-opt %s --split-input-file --kc-build-train-step="lr-schedule=CosineDecay(initial_learning_rate=0.1,decay_steps=0)" 2>&1 | FileCheck %s --check-prefix=SCHED
// RUN: not kcc-opt %s --split-input-file --kc-build-train-step="clipnorm=1 clipvalue=1" 2>&1 | FileCheck %s --check-prefix=CLIP

// OPT: unknown optimizer 'ftrl'
// METRIC: unknown metric 'f1' for loss sparse_categorical_crossentropy
// RANGE: momentum must be finite and in [0, 1), got 1.5
// SCHED: CosineDecay's decay_steps must be finite and > 0, got 0
// CLIP: only one of clipnorm, clipvalue and global_clipnorm can be set

// expected-error @+1 {{'func.func' op has no argument marked {kc.input}}}
func.func @forward(%w: tensor<3x2xf32> {kc.name = "w", kc.trainable = true}) -> tensor<3x2xf32> {
  return %w : tensor<3x2xf32>
}

// -----

// expected-error @+1 {{expects one result (the prediction), got 2}}
func.func @forward(%x: tensor<4x3xf32> {kc.input = 0 : i64}) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  return %x, %x : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// expected-error @+1 {{cannot take the categorical_crossentropy loss}}
func.func @forward(%x: tensor<4xi32> {kc.input = 0 : i64}) -> tensor<4xi32> {
  return %x : tensor<4xi32>
}

// -----

// expected-error @below {{kc-build-train-step expects a func.func @forward}}
module {
  func.func @predict(%x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
