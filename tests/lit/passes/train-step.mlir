// RUN: kcc-opt %s --split-input-file --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=adam metrics=accuracy" | FileCheck %s --check-prefixes=CHECK,ADAM
// RUN: kcc-opt %s --split-input-file --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=sgd momentum=0.9 nesterov=true" | FileCheck %s --check-prefixes=CHECK,SGD
// RUN: kcc-opt %s --split-input-file --kc-build-train-step="loss=sparse_categorical_crossentropy from-logits=true optimizer=rmsprop" | FileCheck %s --check-prefixes=CHECK,RMS
// A stateful metric's result is its statistics (AUC of 5 thresholds: tp, fp,
// tn, fn at each), and the layout says which metric sums them; a metric's
// arguments travel in the option, commas and all.
// RUN: kcc-opt %s --split-input-file --kc-build-train-step="loss=categorical_crossentropy metrics=accuracy,AUC(num_thresholds=5,curve=PR,name=pr)" | FileCheck %s --check-prefix=STATS
// STATS: tensor<f32> {kc.name = "loss"}, tensor<f32> {kc.name = "accuracy"}, tensor<20xf32> {kc.name = "pr"}
// STATS: metric_statistics = ["", "AUC(num_thresholds=5,curve=PR,name=pr)"], metrics = ["accuracy", "pr"]
// kc-train-pipeline takes the pass's own options.
// RUN: kcc-opt %s --split-input-file --kc-train-pipeline="loss=sparse_categorical_crossentropy optimizer=sgd momentum=0.9" | FileCheck %s --check-prefix=PIPE
// PIPE: kc.train_step = {{.*}}optimizer = "sgd", optimizer_state = 2 : i64
// Nadam's optimizer-wide u_product follows the per-param slots and starts
// at 1; a schedule is recorded for the runtime.
// RUN: kcc-opt %s --split-input-file --kc-build-train-step="optimizer=nadam lr-schedule=ExponentialDecay(initial_learning_rate=0.1,decay_steps=2,decay_rate=0.5)" | FileCheck %s --check-prefix=NADAM
// NADAM-LABEL: func.func @train_step(
// NADAM-SAME: {kc.name = "nadam/velocity/dense/bias"}, %{{.*}}: tensor<f32> {kc.name = "nadam/u_product"}
// NADAM-SAME: lr_schedule = "ExponentialDecay(initial_learning_rate=0.1,decay_steps=2,decay_rate=0.5,staircase=false)"
// NADAM-SAME: optimizer = "nadam", optimizer_state = 5 : i64
// NADAM-SAME: state_init = array<f64: 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 1.000000e+00>

// A dense softmax classifier: every param trainable.

func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %b: tensor<2xf32> {kc.name = "dense/bias", kc.trainable = true},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %0 = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = kc.broadcast_to %b : tensor<2xf32> -> tensor<4x2xf32>
  %2 = kc.add %0, %1 : tensor<4x2xf32>
  %3 = kc.softmax %2 : tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}

// @forward stays for inference.
// CHECK-LABEL: func.func @forward(
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<2xf32> {kc.name = "dense/bias", kc.trainable = true}
// ADAM-SAME: tensor<3x2xf32> {kc.name = "adam/momentum/dense/kernel"}, %{{.*}}: tensor<3x2xf32> {kc.name = "adam/velocity/dense/kernel"}
// ADAM-SAME: tensor<2xf32> {kc.name = "adam/momentum/dense/bias"}, %{{.*}}: tensor<2xf32> {kc.name = "adam/velocity/dense/bias"}
// SGD-SAME: tensor<3x2xf32> {kc.name = "sgd/momentum/dense/kernel"}, %{{.*}}: tensor<2xf32> {kc.name = "sgd/momentum/dense/bias"}
// RMS-SAME: tensor<3x2xf32> {kc.name = "rmsprop/velocity/dense/kernel"}, %{{.*}}: tensor<2xf32> {kc.name = "rmsprop/velocity/dense/bias"}
// CHECK-SAME: %[[ITER:[a-z0-9]+]]: tensor<i64> {kc.name = "iterations"}
// CHECK-SAME: %[[LR:[a-z0-9]+]]: tensor<f32> {kc.name = "learning_rate"}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<4x3xf32> {kc.input = 0 : i64}
// CHECK-SAME: %[[Y:[a-z0-9]+]]: tensor<4xi32> {kc.name = "target", kc.target = 0 : i64}
// CHECK-SAME: -> (tensor<f32> {kc.name = "loss"},
// ADAM-SAME: tensor<f32> {kc.name = "accuracy"},
// CHECK-SAME: tensor<3x2xf32> {kc.name = "dense/kernel"}, tensor<2xf32> {kc.name = "dense/bias"},
// CHECK-SAME: tensor<i64> {kc.name = "iterations"})
// ADAM-SAME: kc.train_step = {from_logits = false, inputs = 1 : i64, loss = "sparse_categorical_crossentropy", metrics = ["accuracy"], optimizer = "adam", optimizer_state = 4 : i64, params = 2 : i64}
// SGD-SAME: optimizer = "sgd", optimizer_state = 2 : i64, params = 2 : i64
// RMS-SAME: from_logits = true,
// RMS-SAME: optimizer = "rmsprop", optimizer_state = 2 : i64
// The loss: from probabilities, renormalize and clip; from logits, log_softmax.
// ADAM: kc.one_hot %[[Y]]
// ADAM: kc.max
// ADAM-NEXT: kc.min
// ADAM-NEXT: kc.log
// RMS: kc.log_softmax
// The reverse sweep ends in the kernel's gradient, x^T dz.
// CHECK: kc.matmul %[[X]], %{{.*}} {transpose_lhs = true}
// ADAM: kc.argmax
// Adam's bias correction comes from the runtime step count.
// ADAM: %[[T:.*]] = kc.cast %[[ITER]] : tensor<i64> -> tensor<f32>
// ADAM: kc.pow %{{.*}}, %{{.*}} : tensor<f32>
// ADAM: kc.mul %[[LR]], %{{.*}} : tensor<f32>
// SGD-NOT: kc.pow
// SGD: kc.broadcast_to %[[LR]] : tensor<f32> -> tensor<3x2xf32>
// RMS: kc.sqrt
// ADAM: kc.sub %[[W]], %{{.*}} : tensor<3x2xf32>
// RMS: kc.sub %[[W]], %{{.*}} : tensor<3x2xf32>
// SGD: kc.add %[[W]], %{{.*}} : tensor<3x2xf32>
// CHECK: kc.cast %[[ITER]] : tensor<i64> -> tensor<f64>
// CHECK: return

// -----

// A non-trainable param is neither differentiated nor updated: it has no
// optimizer state and @train_step returns its argument unchanged. The
// dropout counter {kc.step} is fed by the iteration count.

func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %s: tensor<2xf32> {kc.name = "norm/moving_mean", kc.trainable = false},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64},
                   %step: tensor<i64> {kc.step}) -> tensor<4x2xf32> {
  %0 = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %1 = kc.broadcast_to %s : tensor<2xf32> -> tensor<4x2xf32>
  %2 = kc.sub %0, %1 : tensor<4x2xf32>
  %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<4x2xf32>
  %3 = kc.mul %2, %u : tensor<4x2xf32>
  %4 = kc.softmax %3 : tensor<4x2xf32>
  return %4 : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true}
// CHECK-SAME: %[[S:[a-z0-9]+]]: tensor<2xf32> {kc.name = "norm/moving_mean", kc.trainable = false}
// ADAM-SAME: {kc.name = "adam/momentum/dense/kernel"}, %{{.*}}: tensor<3x2xf32> {kc.name = "adam/velocity/dense/kernel"}, %[[ITER:[a-z0-9]+]]: tensor<i64> {kc.name = "iterations"}
// SGD-SAME: {kc.name = "sgd/momentum/dense/kernel"}, %[[ITER:[a-z0-9]+]]: tensor<i64> {kc.name = "iterations"}
// RMS-SAME: {kc.name = "rmsprop/velocity/dense/kernel"}, %[[ITER:[a-z0-9]+]]: tensor<i64> {kc.name = "iterations"}
// CHECK-SAME: -> (
// CHECK: kc.random_uniform %[[ITER]] {seed = 7 : i64}
// CHECK: %[[NEWW:.*]] = kc.{{sub|add}} %[[W]], %{{.*}} : tensor<3x2xf32>
// CHECK-NOT: %[[S]]
// CHECK: return %{{.*}}, %[[NEWW]], %[[S]], %{{.*}} : tensor<f32>
