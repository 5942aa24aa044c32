// RUN: kcc-opt %s --kc-build-train-step="loss=my_loss custom-objects=my_loss,my_metric metrics=my_metric,categorical_accuracy sample-weight=true" | FileCheck %s
// RUN: not kcc-opt %s --kc-build-train-step="loss=absent custom-objects=my_loss" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not kcc-opt %s --kc-build-train-step="loss=bad custom-objects=bad" 2>&1 | FileCheck %s --check-prefix=SHAPE

// A custom loss (a function the frontend traced from C++,
// kcc::CompileOptions::customObjects) is inlined into @train_step on the
// target and the prediction, its per-example values reduced as Keras
// reduces a loss function's (weighted sum_over_batch_size), and
// differentiated with the rest; a custom metric is the mean of its values.
// Both functions are gone from the module afterwards (a function no
// output names is left alone).

func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %y = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

func.func private @"kc.custom.0.my_loss"(%t: tensor<4x2xf32>, %p: tensor<4x2xf32>) -> tensor<4xf32> {
  %d = kc.sub %p, %t : tensor<4x2xf32>
  %a = kc.abs %d : tensor<4x2xf32>
  %m = kc.reduce_sum %a {axes = array<i64: 1>} : tensor<4x2xf32> -> tensor<4xf32>
  return %m : tensor<4xf32>
}

func.func private @"kc.custom.0.my_metric"(%t: tensor<4x2xf32>, %p: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %d = kc.sub %p, %t : tensor<4x2xf32>
  %s = kc.mul %d, %d : tensor<4x2xf32>
  return %s : tensor<4x2xf32>
}

// Not one value per example.
func.func private @"kc.custom.0.bad"(%t: tensor<4x2xf32>, %p: tensor<4x2xf32>) -> tensor<2xf32> {
  %d = kc.sub %p, %t : tensor<4x2xf32>
  %m = kc.reduce_sum %d {axes = array<i64: 0>} : tensor<4x2xf32> -> tensor<2xf32>
  return %m : tensor<2xf32>
}

// CHECK-NOT: kc.custom.0.my
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[T:[^:]*]]: tensor<4x2xf32> {kc.name = "target", kc.target = 0 : i64}, %[[W:.*]]: tensor<4xf32> {kc.name = "sample_weight"})
// CHECK-SAME: kc.train_step = {{.*}}loss = "my_loss", metrics = ["my_metric", "categorical_accuracy"]
// CHECK: %[[Y:.*]] = kc.matmul
// CHECK: %[[D:.*]] = kc.sub %[[Y]], %[[T]]
// CHECK: %[[A:.*]] = kc.abs %[[D]]
// CHECK: %[[PER:.*]] = kc.reduce_sum %[[A]]
// CHECK: %[[WEIGHTED:.*]] = kc.mul %[[PER]], %[[W]] : tensor<4xf32>
// CHECK: kc.reduce_mean %[[WEIGHTED]]
// CHECK: kc.compare  lt, %[[D]]
// CHECK: kc.matmul {{.*}} {transpose_lhs = true}
// CHECK-NOT: kc.custom.0.my

// UNKNOWN: unknown loss 'absent' (expected sparse_categorical_crossentropy, categorical_crossentropy, binary_crossentropy, mean_squared_error, mean_absolute_error, mean_absolute_percentage_error, mean_squared_logarithmic_error, huber, log_cosh, poisson, kl_divergence, cosine_similarity, hinge, squared_hinge, categorical_hinge, binary_focal_crossentropy, categorical_focal_crossentropy, dice, tversky, ctc, categorical_generalized_cross_entropy, circle; or, for a loss written in C++, from C++ supply it in kcc::CompileOptions::customObjects["absent"])

// SHAPE: error: 'func.func' op custom loss 'bad' must be (y_true, y_pred: 'tensor<4x2xf32>') -> float values [4, ...] or a float scalar
