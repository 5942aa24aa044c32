// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise --kc-fuse-epilogues | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise --kc-fuse-epilogues=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Dense + relu: bias and relu become oneDNN post-ops of the GEMM; no loop
// nest is left.
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + relu
// CHECK-LABEL: func.func @dense_relu(
// CHECK: call @kcc_rt_matmul_epilogue_f32(
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dense_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.relu %2 : tensor<8x3xf32>
  return %3 : tensor<8x3xf32>
}

// -----

// Conv2D with a bias and no activation.
// REMARK: remark: fused into kcc_rt_conv2d_epilogue_f32: bias (
// CHECK-LABEL: func.func @conv_bias(
// CHECK: call @kcc_rt_conv2d_epilogue_f32(
// CHECK-NOT: linalg.generic
func.func @conv_bias(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = kc.add %0, %1 : tensor<2x4x4x4xf32>
  return %2 : tensor<2x4x4x4xf32>
}

// -----

// Conv2D + tanh (LeNet's convolutions) and Dense + sigmoid: the activation
// runs in the epilogue too (act 2 and 3); their gradients read the output,
// which the call writes.
// REMARK: remark: fused into kcc_rt_conv2d_epilogue_f32: bias + tanh
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + sigmoid
// CHECK-LABEL: func.func @conv_tanh_dense_sigmoid(
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c2_i64{{[_0-9]*}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c3_i64{{[_0-9]*}}) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_tanh_dense_sigmoid(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>,
                                   %v: tensor<8x4xf32>, %u: tensor<4x3xf32>, %c: tensor<3xf32>)
    -> (tensor<2x4x4x4xf32>, tensor<8x3xf32>) {
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = kc.add %0, %1 : tensor<2x4x4x4xf32>
  %3 = kc.tanh %2 : tensor<2x4x4x4xf32>
  %4 = kc.matmul %v, %u : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %5 = kc.broadcast_to %c : tensor<3xf32> -> tensor<8x3xf32>
  %6 = kc.add %4, %5 : tensor<8x3xf32>
  %7 = kc.sigmoid %6 : tensor<8x3xf32>
  return %3, %7 : tensor<2x4x4x4xf32>, tensor<8x3xf32>
}

// -----

// gelu (both forms) and silu fuse where nothing else reads their input, as
// in @forward (in a training step their gradients read it, which keeps the
// generic).
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + gelu (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + gelu (tanh approximation)
// REMARK: remark: fused into kcc_rt_conv2d_epilogue_f32: bias + silu
// CHECK-LABEL: func.func @gelu_silu(
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c4_i64{{[_0-9]*}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c5_i64{{[_0-9]*}}) :
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c6_i64{{[_0-9]*}}) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @gelu_silu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>,
                     %i: tensor<2x6x6x1xf32>, %k: tensor<3x3x1x4xf32>, %c: tensor<4xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4x4x4xf32>) {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.gelu %2 : tensor<8x3xf32>
  %4 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %5 = kc.add %4, %1 : tensor<8x3xf32>
  %6 = kc.gelu %5 {approximate = true} : tensor<8x3xf32>
  %7 = kc.conv2d %i, %k : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %8 = kc.broadcast_to %c : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %9 = kc.add %7, %8 : tensor<2x4x4x4xf32>
  %10 = kc.sigmoid %9 : tensor<2x4x4x4xf32>
  %11 = kc.mul %9, %10 : tensor<2x4x4x4xf32>
  return %3, %6, %11 : tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4x4x4xf32>
}

// -----

// gelu's input also returned (as a training step keeps it for the
// backward): the bias add and gelu stay one generic.
// CHECK-LABEL: func.func @gelu_input_kept(
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
func.func @gelu_input_kept(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>) {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.gelu %2 : tensor<8x3xf32>
  return %2, %3 : tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// The product is also returned: the bias add cannot replace it, so nothing
// is fused and the GEMM keeps its plain entry point.
// CHECK-LABEL: func.func @product_used_twice(
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
func.func @product_used_twice(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>) {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  return %0, %2 : tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// Relu's gradient mask on the pooled input after a max-pool gradient (the
// backward of Conv2D(relu) -> MaxPooling2D): one call applies the mask where
// it routes the gradient.
// REMARK: remark: fused into kcc_rt_max_pool2d_grad_relu_f32: relu's gradient mask
// CHECK-LABEL: func.func @pool_grad_relu(
// CHECK: call @kcc_rt_max_pool2d_grad_relu_f32(
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pool_grad_relu(%x: tensor<2x4x4x3xf32>, %dy: tensor<2x2x2x3xf32>) -> tensor<2x4x4x3xf32> {
  %0 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  %zero = arith.constant dense<0.0> : tensor<2x4x4x3xf32>
  %1 = kc.compare gt, %x, %zero : tensor<2x4x4x3xf32> -> tensor<2x4x4x3xi1>
  %2 = kc.select %1, %0, %zero : tensor<2x4x4x3xi1>, tensor<2x4x4x3xf32>
  return %2 : tensor<2x4x4x3xf32>
}
