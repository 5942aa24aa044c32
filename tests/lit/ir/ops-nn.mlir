// RUN: kcc-opt %s | kcc-opt | FileCheck %s
// RUN: kcc-opt %s --mlir-print-op-generic | kcc-opt | FileCheck %s

// CHECK-LABEL: func.func @dense
func.func @dense(%x: tensor<32x784xf32>, %w: tensor<784x128xf32>, %dy: tensor<32x128xf32>) -> (tensor<32x128xf32>, tensor<32x784xf32>, tensor<784x128xf32>) {
  // CHECK: kc.matmul %{{.*}}, %{{.*}} : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32>
  %y = kc.matmul %x, %w : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32>
  // CHECK: kc.matmul %{{.*}}, %{{.*}} {transpose_rhs = true}
  %dx = kc.matmul %dy, %w {transpose_rhs = true} : tensor<32x128xf32>, tensor<784x128xf32> -> tensor<32x784xf32>
  // CHECK: kc.matmul %{{.*}}, %{{.*}} {transpose_lhs = true}
  %dw = kc.matmul %x, %dy {transpose_lhs = true} : tensor<32x784xf32>, tensor<32x128xf32> -> tensor<784x128xf32>
  return %y, %dx, %dw : tensor<32x128xf32>, tensor<32x784xf32>, tensor<784x128xf32>
}

// CHECK-LABEL: func.func @softmax
func.func @softmax(%x: tensor<32x10xf32>) -> (tensor<32x10xf32>, tensor<32x10xf32>) {
  // CHECK: kc.softmax %{{.*}} : tensor<32x10xf32>
  %p = kc.softmax %x : tensor<32x10xf32>
  // CHECK: kc.log_softmax %{{.*}} {axis = 0 : i64} : tensor<32x10xf32>
  %l = kc.log_softmax %x {axis = 0 : i64} : tensor<32x10xf32>
  return %p, %l : tensor<32x10xf32>, tensor<32x10xf32>
}

// CHECK-LABEL: func.func @conv
func.func @conv(%x: tensor<8x28x28x1xf32>, %w: tensor<3x3x1x32xf32>, %dy: tensor<8x14x14x32xf32>) -> (tensor<8x14x14x32xf32>, tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<8x24x24x32xf32>) {
  // CHECK: kc.conv2d %{{.*}}, %{{.*}} {padding = #kc<padding same>, strides = array<i64: 2, 2>}
  %y = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x14x14x32xf32>
  // CHECK: kc.conv2d_backprop_input
  %dx = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x14x14x32xf32>, tensor<3x3x1x32xf32> -> tensor<8x28x28x1xf32>
  // CHECK: kc.conv2d_backprop_filter
  %dw = kc.conv2d_backprop_filter %x, %dy {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<8x14x14x32xf32> -> tensor<3x3x1x32xf32>
  // Dilation 2, valid: 28 - (3-1)*2 = 24.
  // CHECK: kc.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 2, 2>}
  %d = kc.conv2d %x, %w {dilations = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x24x24x32xf32>
  return %y, %dx, %dw, %d : tensor<8x14x14x32xf32>, tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32>, tensor<8x24x24x32xf32>
}

// Grouped (depthwise: groups = channels, multiplier 2).
// CHECK-LABEL: func.func @conv_groups
func.func @conv_groups(%x: tensor<8x14x14x4xf32>, %w: tensor<3x3x1x8xf32>) -> tensor<8x12x12x8xf32> {
  // CHECK: kc.conv2d %{{.*}}, %{{.*}} {groups = 4 : i64}
  %y = kc.conv2d %x, %w {groups = 4} : tensor<8x14x14x4xf32>, tensor<3x3x1x8xf32> -> tensor<8x12x12x8xf32>
  return %y : tensor<8x12x12x8xf32>
}

// CHECK-LABEL: func.func @pool
func.func @pool(%x: tensor<8x26x26x32xf32>, %dy: tensor<8x13x13x32xf32>) -> (tensor<8x13x13x32xf32>, tensor<8x13x13x32xf32>, tensor<8x26x26x32xf32>, tensor<8x26x26x32xf32>) {
  // CHECK: kc.max_pool2d %{{.*}} {strides = array<i64: 2, 2>, window = array<i64: 2, 2>}
  %m = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
  // CHECK: kc.avg_pool2d %{{.*}} {padding = #kc<padding same>
  %a = kc.avg_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
  // CHECK: kc.max_pool2d_grad
  %dm = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32>, tensor<8x13x13x32xf32> -> tensor<8x26x26x32xf32>
  // CHECK: kc.avg_pool2d_grad
  %da = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x13x13x32xf32> -> tensor<8x26x26x32xf32>
  return %m, %a, %dm, %da : tensor<8x13x13x32xf32>, tensor<8x13x13x32xf32>, tensor<8x26x26x32xf32>, tensor<8x26x26x32xf32>
}

// CHECK-LABEL: func.func @random
func.func @random(%step: tensor<i64>) -> tensor<32x128xf32> {
  // CHECK: kc.random_uniform %{{.*}} {seed = 7 : i64} : tensor<i64> -> tensor<32x128xf32>
  %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<32x128xf32>
  return %u : tensor<32x128xf32>
}

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%g: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  // CHECK: kc.all_reduce "mean" %{{.*}} : tensor<3x2xf32>
  %m = kc.all_reduce "mean" %g : tensor<3x2xf32>
  // CHECK: kc.all_reduce "sum" %{{.*}} : tensor<3x2xf32>
  %s = kc.all_reduce "sum" %g : tensor<3x2xf32>
  return %m, %s : tensor<3x2xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @all_reduce_bucket
func.func @all_reduce_bucket(%b: tensor<6xf32>) -> tensor<6xf32> {
  // CHECK: %[[S:.*]] = kc.all_reduce_start "mean" %{{.*}} : tensor<6xf32>
  %s = kc.all_reduce_start "mean" %b : tensor<6xf32>
  // CHECK: kc.all_reduce_wait "mean" %[[S]] : tensor<6xf32>
  %r = kc.all_reduce_wait "mean" %s : tensor<6xf32>
  return %r : tensor<6xf32>
}
