// RUN: kcc-opt %s --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=sgd metrics=accuracy sample-weight=true" | FileCheck %s
// RUN: kcc-opt %s --kc-build-train-step="loss=mean_squared_error optimizer=sgd sample-weight=true" | FileCheck %s --check-prefix=MSE

// With sample-weight the step takes f32[batch] weights after the target and
// says so in its layout; the loss is Keras's weighted sum_over_batch_size
// (each example's loss times its weight, then the mean over the batch); the
// accuracy stays unweighted, as Keras 3's compile() metrics are.

func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %y = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %p = kc.softmax %y : tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[T:.*]]: tensor<4xi32> {kc.name = "target", kc.target = 0 : i64}, %[[W:.*]]: tensor<4xf32> {kc.name = "sample_weight"})
// CHECK-SAME: kc.train_step = {{.*}}sample_weight = true
// CHECK: %[[PER:.*]] = kc.reduce_sum {{.*}} -> tensor<4xf32>
// CHECK: %[[WEIGHTED:.*]] = kc.mul %[[PER]], %[[W]] : tensor<4xf32>
// CHECK: %[[MEAN:.*]] = kc.reduce_mean %[[WEIGHTED]]
// CHECK: kc.neg %[[MEAN]] : tensor<f32>

// MSE: func.func @train_step({{.*}}%[[W:.*]]: tensor<4xf32> {kc.name = "sample_weight"})
// MSE: %[[PER:.*]] = kc.reduce_mean {{.*}} -> tensor<4xf32>
// MSE: %[[WEIGHTED:.*]] = kc.mul %[[PER]], %[[W]] : tensor<4xf32>
// MSE: kc.reduce_mean %[[WEIGHTED]]
