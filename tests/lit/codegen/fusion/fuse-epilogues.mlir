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
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c2_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c3_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
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
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c4_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c5_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c6_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
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

// -----

// kc-pool-before-activation's form: relu after the pooling, its mask on
// the pooled gradient (here of a Dense layer on y). y > 0 exactly where the
// window's first maximum of x is above 0, so the same call applies the
// mask where it routes.
// The relu itself fuses into the pooling.
// REMARK: remark: fused into kcc_rt_max_pool2d_relu_f32: relu (
// REMARK: remark: fused into kcc_rt_max_pool2d_grad_relu_f32: relu's gradient mask after the pooling
// CHECK-LABEL: func.func @relu_after_pool_grad(
// CHECK-NOT: linalg.generic
// CHECK: call @kcc_rt_max_pool2d_relu_f32(
// CHECK-NOT: linalg.generic
// CHECK: call @kcc_rt_matmul_f32(
// CHECK-NOT: linalg.generic
// CHECK: call @kcc_rt_max_pool2d_grad_relu_f32(
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @relu_after_pool_grad(%x: tensor<2x4x4x3xf32>, %w: tensor<12x12xf32>) -> (tensor<2x2x2x3xf32>, tensor<2x4x4x3xf32>) {
  %p = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  %y = kc.relu %p : tensor<2x2x2x3xf32>
  %yf = kc.reshape %y : tensor<2x2x2x3xf32> -> tensor<2x12xf32>
  %d = kc.matmul %yf, %w : tensor<2x12xf32>, tensor<12x12xf32> -> tensor<2x12xf32>
  %dy = kc.reshape %d : tensor<2x12xf32> -> tensor<2x2x2x3xf32>
  %zero = arith.constant dense<0.0> : tensor<2x2x2x3xf32>
  %m = kc.compare gt, %y, %zero : tensor<2x2x2x3xf32> -> tensor<2x2x2x3xi1>
  %g = kc.select %m, %dy, %zero : tensor<2x2x2x3xi1>, tensor<2x2x2x3xf32>
  %0 = kc.max_pool2d_grad %x, %g {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  return %y, %0 : tensor<2x2x2x3xf32>, tensor<2x4x4x3xf32>
}

// -----

// The mask's relu is of a pooling of x with other attributes (same
// padding) than the gradient's: the mask stays.
// CHECK-LABEL: func.func @relu_of_other_pool_kept(
// CHECK: call @kcc_rt_max_pool2d_relu_f32(
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK: call @kcc_rt_max_pool2d_grad_f32(
func.func @relu_of_other_pool_kept(%x: tensor<2x4x4x3xf32>, %w: tensor<12x12xf32>) -> (tensor<2x2x2x3xf32>, tensor<2x4x4x3xf32>) {
  %p = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  %y = kc.relu %p : tensor<2x2x2x3xf32>
  %yf = kc.reshape %y : tensor<2x2x2x3xf32> -> tensor<2x12xf32>
  %d = kc.matmul %yf, %w : tensor<2x12xf32>, tensor<12x12xf32> -> tensor<2x12xf32>
  %dy = kc.reshape %d : tensor<2x12xf32> -> tensor<2x2x2x3xf32>
  %zero = arith.constant dense<0.0> : tensor<2x2x2x3xf32>
  %m = kc.compare gt, %y, %zero : tensor<2x2x2x3xf32> -> tensor<2x2x2x3xi1>
  %g = kc.select %m, %dy, %zero : tensor<2x2x2x3xi1>, tensor<2x2x2x3xf32>
  %0 = kc.max_pool2d_grad %x, %g {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32> -> tensor<2x4x4x3xf32>
  return %y, %0 : tensor<2x2x2x3xf32>, tensor<2x4x4x3xf32>
}

// -----

// The activations frontend/ops/Activations.cpp composes of kc ops. elu as
// Keras's "elu" writes it (alpha 1: no multiply): act 7 with the alpha as
// the last argument.
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + elu (alpha 1) (
// CHECK-LABEL: func.func @dense_elu(
// CHECK: %[[ALPHA:[a-z0-9_]+]] = arith.constant 1.000000e+00 : f64
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c7_i64{{[_0-9]*}}, %[[ALPHA]]) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dense_elu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %one = kc.constant dense<1.0> : tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.min %2, %zero : tensor<8x3xf32>
  %4 = kc.exp %3 : tensor<8x3xf32>
  %5 = kc.sub %4, %one : tensor<8x3xf32>
  %6 = kc.compare gt, %2, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %7 = kc.select %6, %2, %5 : tensor<8x3xi1>, tensor<8x3xf32>
  return %7 : tensor<8x3xf32>
}

// -----

// The ELU layer's alpha, after a convolution; the multiply's operands in
// the other order.
// REMARK: remark: fused into kcc_rt_conv2d_epilogue_f32: bias + elu (alpha 0.5) (
// CHECK-LABEL: func.func @conv_elu_alpha(
// CHECK: %[[ALPHA:[a-z0-9_]+]] = arith.constant 5.000000e-01 : f64
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c7_i64{{[_0-9]*}}, %[[ALPHA]]) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @conv_elu_alpha(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x4xf32> {
  %zero = kc.constant dense<0.0> : tensor<2x4x4x4xf32>
  %one = kc.constant dense<1.0> : tensor<2x4x4x4xf32>
  %alpha = kc.constant dense<0.5> : tensor<2x4x4x4xf32>
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = kc.add %1, %0 : tensor<2x4x4x4xf32>
  %3 = kc.min %2, %zero : tensor<2x4x4x4xf32>
  %4 = kc.exp %3 : tensor<2x4x4x4xf32>
  %5 = kc.sub %4, %one : tensor<2x4x4x4xf32>
  %6 = kc.mul %5, %alpha : tensor<2x4x4x4xf32>
  %7 = kc.compare gt, %2, %zero : tensor<2x4x4x4xf32> -> tensor<2x4x4x4xi1>
  %8 = kc.select %7, %2, %6 : tensor<2x4x4x4xi1>, tensor<2x4x4x4xf32>
  return %8 : tensor<2x4x4x4xf32>
}

// -----

// selu: scale * elu(x, alpha) with jax.nn.selu's constants, in f32 and f64.
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + selu (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f64: bias + selu (
// CHECK-LABEL: func.func @dense_selu(
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c8_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f64({{.*}}, %c8_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dense_selu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>,
                      %u: tensor<8x4xf64>, %v: tensor<4x3xf64>, %c: tensor<3xf64>)
    -> (tensor<8x3xf32>, tensor<8x3xf64>) {
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %one = kc.constant dense<1.0> : tensor<8x3xf32>
  %alpha = kc.constant dense<1.6732632423543772848170429916717> : tensor<8x3xf32>
  %scale = kc.constant dense<1.0507009873554804934193349852946> : tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.min %2, %zero : tensor<8x3xf32>
  %4 = kc.exp %3 : tensor<8x3xf32>
  %5 = kc.sub %4, %one : tensor<8x3xf32>
  %6 = kc.mul %alpha, %5 : tensor<8x3xf32>
  %7 = kc.compare gt, %2, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %8 = kc.select %7, %2, %6 : tensor<8x3xi1>, tensor<8x3xf32>
  %9 = kc.mul %scale, %8 : tensor<8x3xf32>
  %dzero = kc.constant dense<0.0> : tensor<8x3xf64>
  %done = kc.constant dense<1.0> : tensor<8x3xf64>
  %dalpha = kc.constant dense<1.6732632423543772848170429916717> : tensor<8x3xf64>
  %dscale = kc.constant dense<1.0507009873554804934193349852946> : tensor<8x3xf64>
  %10 = kc.matmul %u, %v : tensor<8x4xf64>, tensor<4x3xf64> -> tensor<8x3xf64>
  %11 = kc.broadcast_to %c : tensor<3xf64> -> tensor<8x3xf64>
  %12 = kc.add %10, %11 : tensor<8x3xf64>
  %13 = kc.min %12, %dzero : tensor<8x3xf64>
  %14 = kc.exp %13 : tensor<8x3xf64>
  %15 = kc.sub %14, %done : tensor<8x3xf64>
  %16 = kc.mul %dalpha, %15 : tensor<8x3xf64>
  %17 = kc.compare gt, %12, %dzero : tensor<8x3xf64> -> tensor<8x3xi1>
  %18 = kc.select %17, %12, %16 : tensor<8x3xi1>, tensor<8x3xf64>
  %19 = kc.mul %dscale, %18 : tensor<8x3xf64>
  return %9, %19 : tensor<8x3xf32>, tensor<8x3xf64>
}

// -----

// leaky_relu (Keras's default slope, and LeakyReLU's negative_slope):
// act 9 with the slope.
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + leaky_relu (negative slope 0.2) (
// CHECK-LABEL: func.func @dense_leaky_relu(
// CHECK: %[[SLOPE:[a-z0-9_]+]] = arith.constant 0.20000000298023224 : f64
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c9_i64{{[_0-9]*}}, %[[SLOPE]]) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dense_leaky_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %slope = kc.constant dense<0.2> : tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.compare ge, %2, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %4 = kc.mul %slope, %2 : tensor<8x3xf32>
  %5 = kc.select %3, %2, %4 : tensor<8x3xi1>, tensor<8x3xf32>
  return %5 : tensor<8x3xf32>
}

// -----

// relu6 after a convolution (MobileNet's ReLU(6)), and ReLU(max_value=4)
// as keras.activations.relu clips it: act 10 with the maximum.
// REMARK: remark: fused into kcc_rt_conv2d_epilogue_f32: bias + relu6 (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + relu (max value 4) (
// CHECK-LABEL: func.func @relu6_and_max_value(
// CHECK: %[[SIX:[a-z0-9_]+]] = arith.constant 6.000000e+00 : f64
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c10_i64{{[_0-9]*}}, %[[SIX]]) :
// CHECK: %[[FOUR:[a-z0-9_]+]] = arith.constant 4.000000e+00 : f64
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c10_i64{{[_0-9]*}}, %[[FOUR]]) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @relu6_and_max_value(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>,
                               %v: tensor<8x4xf32>, %u: tensor<4x3xf32>, %c: tensor<3xf32>)
    -> (tensor<2x4x4x4xf32>, tensor<8x3xf32>) {
  %six = kc.constant dense<6.0> : tensor<2x4x4x4xf32>
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %2 = kc.add %0, %1 : tensor<2x4x4x4xf32>
  %3 = kc.relu %2 : tensor<2x4x4x4xf32>
  %4 = kc.min %3, %six : tensor<2x4x4x4xf32>
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %four = kc.constant dense<4.0> : tensor<8x3xf32>
  %5 = kc.matmul %v, %u : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %6 = kc.broadcast_to %c : tensor<3xf32> -> tensor<8x3xf32>
  %7 = kc.add %5, %6 : tensor<8x3xf32>
  %8 = kc.relu %7 : tensor<8x3xf32>
  %9 = kc.max %8, %zero : tensor<8x3xf32>
  %10 = kc.min %9, %four : tensor<8x3xf32>
  return %4, %10 : tensor<2x4x4x4xf32>, tensor<8x3xf32>
}

// -----

// softplus, in frontend/ops/Activations.cpp's operand order and in the
// other, and mish: acts 11 and 12.
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + softplus (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + softplus (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + mish (
// CHECK-LABEL: func.func @softplus_mish(
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c11_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c11_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c12_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @softplus_mish(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>) {
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %one = kc.constant dense<1.0> : tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.abs %2 : tensor<8x3xf32>
  %4 = kc.neg %3 : tensor<8x3xf32>
  %5 = kc.exp %4 : tensor<8x3xf32>
  %6 = kc.add %one, %5 : tensor<8x3xf32>
  %7 = kc.log %6 : tensor<8x3xf32>
  %8 = kc.max %2, %zero : tensor<8x3xf32>
  %9 = kc.add %8, %7 : tensor<8x3xf32>
  %10 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %11 = kc.add %10, %1 : tensor<8x3xf32>
  %12 = kc.abs %11 : tensor<8x3xf32>
  %13 = kc.neg %12 : tensor<8x3xf32>
  %14 = kc.exp %13 : tensor<8x3xf32>
  %15 = kc.add %14, %one : tensor<8x3xf32>
  %16 = kc.log %15 : tensor<8x3xf32>
  %17 = kc.max %11, %zero : tensor<8x3xf32>
  %18 = kc.add %16, %17 : tensor<8x3xf32>
  %20 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %21 = kc.add %20, %1 : tensor<8x3xf32>
  %22 = kc.abs %21 : tensor<8x3xf32>
  %23 = kc.neg %22 : tensor<8x3xf32>
  %24 = kc.exp %23 : tensor<8x3xf32>
  %25 = kc.add %one, %24 : tensor<8x3xf32>
  %26 = kc.log %25 : tensor<8x3xf32>
  %27 = kc.max %21, %zero : tensor<8x3xf32>
  %28 = kc.add %27, %26 : tensor<8x3xf32>
  %29 = kc.tanh %28 : tensor<8x3xf32>
  %30 = kc.mul %21, %29 : tensor<8x3xf32>
  return %9, %18, %30 : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// hard_sigmoid and hard_silu (relu6(x + 3) / 6), exponential and softsign:
// acts 13 to 16.
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + hard_sigmoid (
// REMARK: remark: fused into kcc_rt_conv2d_epilogue_f32: bias + hard_silu (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + exponential (
// REMARK: remark: fused into kcc_rt_matmul_epilogue_f32: bias + softsign (
// CHECK-LABEL: func.func @hard_sigmoid_silu_exp_softsign(
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c13_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_conv2d_epilogue_f32({{.*}}, %c14_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c15_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK: call @kcc_rt_matmul_epilogue_f32({{.*}}, %c16_i64{{[_0-9]*}}, %{{[a-z0-9_]+}}) :
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @hard_sigmoid_silu_exp_softsign(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>,
                                          %i: tensor<2x6x6x1xf32>, %k: tensor<3x3x1x4xf32>, %c: tensor<4xf32>)
    -> (tensor<8x3xf32>, tensor<2x4x4x4xf32>, tensor<8x3xf32>, tensor<8x3xf32>) {
  %one = kc.constant dense<1.0> : tensor<8x3xf32>
  %three = kc.constant dense<3.0> : tensor<8x3xf32>
  %six = kc.constant dense<6.0> : tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.add %2, %three : tensor<8x3xf32>
  %4 = kc.relu %3 : tensor<8x3xf32>
  %5 = kc.min %4, %six : tensor<8x3xf32>
  %6 = kc.div %5, %six : tensor<8x3xf32>
  %cthree = kc.constant dense<3.0> : tensor<2x4x4x4xf32>
  %csix = kc.constant dense<6.0> : tensor<2x4x4x4xf32>
  %10 = kc.conv2d %i, %k : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %11 = kc.broadcast_to %c : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %12 = kc.add %10, %11 : tensor<2x4x4x4xf32>
  %13 = kc.add %12, %cthree : tensor<2x4x4x4xf32>
  %14 = kc.relu %13 : tensor<2x4x4x4xf32>
  %15 = kc.min %14, %csix : tensor<2x4x4x4xf32>
  %16 = kc.div %15, %csix : tensor<2x4x4x4xf32>
  %17 = kc.mul %12, %16 : tensor<2x4x4x4xf32>
  %20 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %21 = kc.add %20, %1 : tensor<8x3xf32>
  %22 = kc.exp %21 : tensor<8x3xf32>
  %30 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %31 = kc.add %30, %1 : tensor<8x3xf32>
  %32 = kc.abs %31 : tensor<8x3xf32>
  %33 = kc.add %32, %one : tensor<8x3xf32>
  %34 = kc.div %31, %33 : tensor<8x3xf32>
  return %6, %17, %22, %34 : tensor<8x3xf32>, tensor<2x4x4x4xf32>, tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// A constant other than the composition's keeps the generic: hard_sigmoid
// dividing by 5, elu subtracting 2, selu with another scale, a relu6
// clipping at a value that is not a constant.
// REMARK-NOT: remark: fused
// CHECK-LABEL: func.func @wrong_constants(
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK-NOT: epilogue
// CHECK: return
func.func @wrong_constants(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>, %m: tensor<8x3xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>) {
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %two = kc.constant dense<2.0> : tensor<8x3xf32>
  %three = kc.constant dense<3.0> : tensor<8x3xf32>
  %five = kc.constant dense<5.0> : tensor<8x3xf32>
  %six = kc.constant dense<6.0> : tensor<8x3xf32>
  %alpha = kc.constant dense<1.6732632423543772848170429916717> : tensor<8x3xf32>
  %scale = kc.constant dense<1.05> : tensor<8x3xf32>
  %one = kc.constant dense<1.0> : tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.add %2, %three : tensor<8x3xf32>
  %4 = kc.relu %3 : tensor<8x3xf32>
  %5 = kc.min %4, %six : tensor<8x3xf32>
  %6 = kc.div %5, %five : tensor<8x3xf32>
  %10 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %11 = kc.add %10, %1 : tensor<8x3xf32>
  %12 = kc.min %11, %zero : tensor<8x3xf32>
  %13 = kc.exp %12 : tensor<8x3xf32>
  %14 = kc.sub %13, %two : tensor<8x3xf32>
  %15 = kc.compare gt, %11, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %16 = kc.select %15, %11, %14 : tensor<8x3xi1>, tensor<8x3xf32>
  %20 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %21 = kc.add %20, %1 : tensor<8x3xf32>
  %22 = kc.min %21, %zero : tensor<8x3xf32>
  %23 = kc.exp %22 : tensor<8x3xf32>
  %24 = kc.sub %23, %one : tensor<8x3xf32>
  %25 = kc.mul %alpha, %24 : tensor<8x3xf32>
  %26 = kc.compare gt, %21, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %27 = kc.select %26, %21, %25 : tensor<8x3xi1>, tensor<8x3xf32>
  %28 = kc.mul %scale, %27 : tensor<8x3xf32>
  %30 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %31 = kc.add %30, %1 : tensor<8x3xf32>
  %32 = kc.relu %31 : tensor<8x3xf32>
  %33 = kc.min %32, %m : tensor<8x3xf32>
  return %6, %16, %28, %33 : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// A training step's forward: the backward of elu, leaky_relu and relu6
// reads their input (the compare), returned here as the step keeps it, so
// the product has a second reader and each generic stays.
// CHECK-LABEL: func.func @input_kept_for_backward(
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK: call @kcc_rt_matmul_f32(
// CHECK: linalg.generic
// CHECK: call @kcc_rt_conv2d_f32(
// CHECK: linalg.generic
// CHECK-NOT: epilogue
// CHECK: return
func.func @input_kept_for_backward(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>,
                                   %i: tensor<2x6x6x1xf32>, %k: tensor<3x3x1x4xf32>, %c: tensor<4xf32>)
    -> (tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>) {
  %zero = kc.constant dense<0.0> : tensor<8x3xf32>
  %one = kc.constant dense<1.0> : tensor<8x3xf32>
  %slope = kc.constant dense<0.2> : tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.min %2, %zero : tensor<8x3xf32>
  %4 = kc.exp %3 : tensor<8x3xf32>
  %5 = kc.sub %4, %one : tensor<8x3xf32>
  %6 = kc.compare gt, %2, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %7 = kc.select %6, %2, %5 : tensor<8x3xi1>, tensor<8x3xf32>
  %10 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %11 = kc.add %10, %1 : tensor<8x3xf32>
  %12 = kc.compare ge, %11, %zero : tensor<8x3xf32> -> tensor<8x3xi1>
  %13 = kc.mul %slope, %11 : tensor<8x3xf32>
  %14 = kc.select %12, %11, %13 : tensor<8x3xi1>, tensor<8x3xf32>
  %six = kc.constant dense<6.0> : tensor<2x4x4x4xf32>
  %20 = kc.conv2d %i, %k : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %21 = kc.broadcast_to %c : tensor<4xf32> -> tensor<2x4x4x4xf32>
  %22 = kc.add %20, %21 : tensor<2x4x4x4xf32>
  %23 = kc.relu %22 : tensor<2x4x4x4xf32>
  %24 = kc.min %23, %six : tensor<2x4x4x4xf32>
  return %2, %7, %11, %14, %22, %24 : tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>
}
