// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise --kc-fuse-epilogues | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise --kc-fuse-epilogues=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// The gradient of an average pooling followed by the gradient of the
// activation before it, read from that activation's output %y (the
// pooling's input): one call applies the activation's factor where it
// writes the input gradient, with %y as its first pointer and %y's dims
// first. LeNet-5's backward: Conv2D(tanh) -> AveragePooling2D.
// REMARK: remark: fused into kcc_rt_avg_pool2d_grad_tanh_f32: tanh's gradient
// CHECK-LABEL: func.func @avg_pool_grad_tanh(
// CHECK-SAME: %[[Y:[a-z0-9]+]]: tensor<2x5x5x3xf32>
// CHECK: %[[YM:[0-9]+]] = bufferization.to_memref %[[Y]] read_only
// CHECK: %[[YI:[a-z0-9_]+]] = memref.extract_aligned_pointer_as_index %[[YM]]
// CHECK: %[[YC:[0-9]+]] = arith.index_cast %[[YI]]
// CHECK: %[[YP:[0-9]+]] = llvm.inttoptr %[[YC]]
// CHECK: call @kcc_rt_avg_pool2d_grad_tanh_f32(%[[YP]], %{{.+}}, %{{.+}}, %c2_i64, %c5_i64, %c5_i64, %c3_i64, %c2_i64, %c2_i64, %c2_i64, %c3_i64, %c2_i64, %c5_i64, %c5_i64, %c3_i64, %c2_i64, %c2_i64, %c2_i64, %c2_i64, %c0_i64)
// CHECK-NOT: linalg.generic
// CHECK-NOT: kcc_rt_avg_pool2d_grad_f32
// CHECK: return
func.func @avg_pool_grad_tanh(%y: tensor<2x5x5x3xf32>, %dy: tensor<2x2x2x3xf32>) -> tensor<2x5x5x3xf32> {
  %one = kc.constant dense<1.0> : tensor<2x5x5x3xf32>
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x2x2x3xf32> -> tensor<2x5x5x3xf32>
  %1 = kc.mul %y, %y : tensor<2x5x5x3xf32>
  %2 = kc.sub %one, %1 : tensor<2x5x5x3xf32>
  %3 = kc.mul %0, %2 : tensor<2x5x5x3xf32>
  return %3 : tensor<2x5x5x3xf32>
}

// -----

// Relu's mask, with windows that overlap (Same padding, stride 1): the
// kernel sums each image's windows, then masks.
// REMARK: remark: fused into kcc_rt_avg_pool2d_grad_relu_f32: relu's gradient
// CHECK-LABEL: func.func @avg_pool_grad_relu(
// CHECK: call @kcc_rt_avg_pool2d_grad_relu_f32(
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @avg_pool_grad_relu(%y: tensor<2x4x4x3xf32>, %dy: tensor<2x4x4x3xf32>) -> tensor<2x4x4x3xf32> {
  %zero = arith.constant dense<0.0> : tensor<2x4x4x3xf32>
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = #kc<padding same>} : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xf32>
  %1 = kc.compare gt, %y, %zero : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xi1>
  %2 = kc.select %1, %0, %zero : tensor<2x4x4x3xi1>, tensor<2x4x4x3xf32>
  return %2 : tensor<2x4x4x3xf32>
}

// -----

// Sigmoid's y * (1 - y), its products in the other order, in f64.
// REMARK: remark: fused into kcc_rt_avg_pool2d_grad_sigmoid_f64: sigmoid's gradient
// CHECK-LABEL: func.func @avg_pool_grad_sigmoid(
// CHECK: call @kcc_rt_avg_pool2d_grad_sigmoid_f64(
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @avg_pool_grad_sigmoid(%y: tensor<2x4x4x3xf64>, %dy: tensor<2x2x2x3xf64>) -> tensor<2x4x4x3xf64> {
  %one = kc.constant dense<1.0> : tensor<2x4x4x3xf64>
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x2x2x3xf64> -> tensor<2x4x4x3xf64>
  %1 = kc.sub %one, %y : tensor<2x4x4x3xf64>
  %2 = kc.mul %1, %y : tensor<2x4x4x3xf64>
  %3 = kc.mul %2, %0 : tensor<2x4x4x3xf64>
  return %3 : tensor<2x4x4x3xf64>
}

// -----

// Not an activation's gradient: g * (2 - y * y) keeps the generic and the
// plain call.
// REMARK-NOT: remark:
// CHECK-LABEL: func.func @avg_pool_grad_other(
// CHECK: call @kcc_rt_avg_pool2d_grad_f32(
// CHECK: linalg.generic
// CHECK: return
func.func @avg_pool_grad_other(%y: tensor<2x4x4x3xf32>, %dy: tensor<2x2x2x3xf32>) -> tensor<2x4x4x3xf32> {
  %two = kc.constant dense<2.0> : tensor<2x4x4x3xf32>
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  %1 = kc.mul %y, %y : tensor<2x4x4x3xf32>
  %2 = kc.sub %two, %1 : tensor<2x4x4x3xf32>
  %3 = kc.mul %0, %2 : tensor<2x4x4x3xf32>
  return %3 : tensor<2x4x4x3xf32>
}

// -----

// The pooled gradient is read twice (the tanh factor and a second use):
// the call's output is still needed as is, so nothing fuses.
// CHECK-LABEL: func.func @avg_pool_grad_two_uses(
// CHECK: call @kcc_rt_avg_pool2d_grad_f32(
// CHECK: linalg.generic
// CHECK: return
func.func @avg_pool_grad_two_uses(%y: tensor<2x4x4x3xf32>, %dy: tensor<2x2x2x3xf32>) -> (tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32>) {
  %one = kc.constant dense<1.0> : tensor<2x4x4x3xf32>
  %0 = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  %1 = kc.mul %y, %y : tensor<2x4x4x3xf32>
  %2 = kc.sub %one, %1 : tensor<2x4x4x3xf32>
  %3 = kc.mul %0, %2 : tensor<2x4x4x3xf32>
  return %3, %0 : tensor<2x4x4x3xf32>, tensor<2x4x4x3xf32>
}
