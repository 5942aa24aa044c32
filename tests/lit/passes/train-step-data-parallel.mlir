// RUN: kcc-opt %s --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=sgd data-parallel=true" | FileCheck %s
// RUN: kcc-opt %s --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=sgd data-parallel=true clipnorm=1" | FileCheck %s --check-prefix=CLIP

// data-parallel: the gradient is the mean over the ranks, taken after the
// reverse sweep and before the optimizer (and before clipping, as Keras's
// distribution strategies aggregate before apply_gradients); the frozen
// param gets none.

func.func @forward(%w: tensor<3x2xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %f: tensor<2xf32> {kc.name = "frozen"},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %y = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %b = kc.broadcast_to %f : tensor<2xf32> -> tensor<4x2xf32>
  %z = kc.add %y, %b : tensor<4x2xf32>
  %p = kc.softmax %z : tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: %[[DW:.*]] = kc.matmul %{{.*}}, %{{.*}} {transpose_lhs = true}
// CHECK: %[[F:.*]] = kc.reshape %[[DW]] : tensor<3x2xf32> -> tensor<6xf32>
// CHECK: %[[S:.*]] = kc.all_reduce_start "mean" %[[F]] : tensor<6xf32>
// CHECK: %[[R:.*]] = kc.all_reduce_wait "mean" %[[S]] : tensor<6xf32>
// CHECK: %[[G:.*]] = kc.reshape %[[R]] : tensor<6xf32> -> tensor<3x2xf32>
// CHECK-NOT: kc.all_reduce
// CHECK: kc.mul %[[G]], %{{.*}}
// CHECK: kc.sub %arg0
// CHECK: return

// CLIP: kc.all_reduce_wait "mean"
// CLIP: %[[G:.*]] = kc.reshape
// CLIP: kc.mul %[[G]], %[[G]]
