// RUN: kcc-opt %s --split-input-file --kc-cuda-pipeline="stop-at-outlining=1" | FileCheck %s --check-prefix=GPU
// RUN: kcc-opt %s --split-input-file --kc-cuda-pipeline="stop-at-nvvm=1" | FileCheck %s --check-prefix=NVVM
// RUN: kcc-opt %s --split-input-file --kc-cuda-pipeline | FileCheck %s --check-prefix=PTX

// Dense + relu, then a bias gradient (a reduction over the batch, dimension
// 0) and a loss-like full reduction to a scalar: every loop nest becomes a
// kernel launch, the GEMM stays a library call (cuBLASLt), nothing loops on
// the host.
// GPU-LABEL: func.func @dense_relu
// GPU-NOT: scf.for
// GPU: call @kcc_rt_matmul_f32
// GPU: gpu.launch_func @dense_relu_kernel{{.*}}::@dense_relu_kernel blocks in
// GPU: gpu.module @dense_relu_kernel
// GPU: gpu.block_id x
// GPU: gpu.thread_id x
// NVVM: gpu.module @dense_relu_kernel{{.*}} [#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">]
// NVVM: nvvm.read.ptx.sreg.tid.x
// PTX: gpu.binary @dense_relu_kernel{{.*}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">, properties = {O = 3 : i32}, assembly = "
// PTX-SAME: .target sm_90
func.func @dense_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>, tensor<f32>) {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.relu %2 : tensor<8x3xf32>
  %4 = kc.reduce_sum %3 {axes = array<i64: 0>} : tensor<8x3xf32> -> tensor<3xf32>
  %5 = kc.reduce_sum %3 {axes = array<i64: 0, 1>} : tensor<8x3xf32> -> tensor<f32>
  return %3, %4, %5 : tensor<8x3xf32>, tensor<3xf32>, tensor<f32>
}

// -----

// Convolution and pooling are generated kernels, not library calls; the
// math (exp) becomes a libdevice call linked into the PTX.
// GPU-LABEL: func.func @conv_pool
// GPU-NOT: call @kcc_rt_conv2d
// GPU-NOT: call @kcc_rt_max_pool2d
// GPU: gpu.launch_func
// NVVM: llvm.call @__nv_expf
// PTX: gpu.binary
// PTX-NOT: __nv_expf
func.func @conv_pool(%x: tensor<2x6x6x1xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<2x2x2x4xf32> {
  %0 = kc.conv2d %x, %w : tensor<2x6x6x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x4x4x4xf32>
  %1 = kc.exp %0 : tensor<2x4x4x4xf32>
  %2 = kc.max_pool2d %1 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x4xf32> -> tensor<2x2x2x4xf32>
  return %2 : tensor<2x2x2x4xf32>
}
