// What `kcc --fusion-report` shows of BatchNormalization on the ResNet
// fixture (Conv2D, BatchNormalization, ReLU; batch 32, 14x14x16 after the
// strided stem), first block (batch_normalization, re_lu):
//
//  forward (the step's batch statistics):
//   - the mean: a per-row partial sum over H and W (a kernel alone), then
//     its sum over the batch and the scaling (one serial group of 2);
//   - x - mean, its square and the variance's per-row partial sums: one
//     parallel kernel (4 loop nests; the 401408 B of squares never leave
//     it);
//   - the variance's sum over the batch, the moving mean and variance
//     updates and the scale-shift coefficients (inv = rsqrt(var + eps) *
//     gamma, beta - mean * inv): one serial kernel of 3 loop nests;
//   - normalization, scale-shift and the following ReLU: one elementwise
//     kernel, x * inv + shift then max(., 0) (the report credits it to
//     re_lu: 1 producer fused, x * inv and x * inv + shift never written).
//  So the statistics do not fuse with the normalization: five kernels and a
//  group of fills per BatchNormalization + ReLU in the forward.
//
//  backward: ReLU's gradient (and the residual Add's sum of gradients)
//  fuses into the kernel of BatchNormalization's first per-row reduction,
//  and BatchNormalization's input gradient into the kernel of the next
//  per-row reduction.
//
// RUN: kcc %kcc_src/tests/fixtures/keras/resnet.keras --fusion-report | FileCheck %s
// RUN: kcc %kcc_src/tests/fixtures/keras/resnet.keras --emit=fused | FileCheck %s --check-prefix=FUSED

// CHECK: kcc fusion report: @train_step
// CHECK: elementwise fusion (kc-fuse-elementwise)
// CHECK-NEXT: [batch_normalization] 17 producers fused, 2409536 B never written
// CHECK-NEXT: [re_lu] 1 producers fused, 802816 B never written
// CHECK: [batch_normalization/grad] 18 producers fused

// CHECK: fusion groups (kc-fuse-loops)
// CHECK-NEXT: [batch_normalization] fusion group (rows, serial): 2 loop nests in one kernel, layers [batch_normalization]
// CHECK-NEXT: [batch_normalization] fusion group (rows, serial): 2 loop nests in one kernel, layers [batch_normalization]
// CHECK-NEXT: [batch_normalization] fusion group (rows, parallel): 4 loop nests in one kernel, layers [batch_normalization], 401408 B of buffers used only inside it
// CHECK-NEXT: [batch_normalization, resnet] fusion group (rows, serial): 3 loop nests in one kernel, layers [batch_normalization, resnet]
// CHECK-NEXT: [batch_normalization_1] fusion group

// The backward of the first block (last in the step).
// CHECK: [batch_normalization/grad] fusion group (rows, parallel): 4 loop nests in one kernel, layers [re_lu/grad, re_lu, re_lu_2/grad, conv2d_1/grad, batch_normalization/grad]
// CHECK-NEXT: [batch_normalization/grad] fusion group (rows, serial): 3 loop nests
// CHECK-NEXT: [batch_normalization/grad] fusion group (rows, serial): 2 loop nests
// CHECK-NEXT: [batch_normalization/grad] fusion group (rows, parallel): 4 loop nests in one kernel, layers [batch_normalization/grad, re_lu/grad, batch_normalization]

// CHECK: refused fusions, with the reason
// CHECK: [batch_normalization] not fused with the loop nest before: it would make a loop that runs on all cores serial

// Normalization, scale-shift and ReLU: one loop nest over the activation.
// FUSED-LABEL: func.func @train_step
// FUSED: call @kcc_rt_conv2d_f32
// FUSED: linalg.generic {{.*}} ins(%{{[0-9]+}}, %{{[0-9]+}}#2, %{{[0-9]+}}#4 : tensor<32x14x14x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%{{[0-9]+}} : tensor<32x14x14x16xf32>)
// FUSED-NEXT: ^bb0
// FUSED-NEXT: [[X:%[0-9]+]] = arith.mulf %in, %in_{{[0-9]+}} : f32
// FUSED-NEXT: [[Y:%[0-9]+]] = arith.addf [[X]], %in_{{[0-9]+}} : f32
// FUSED-NEXT: [[NEG:%[0-9]+]] = arith.cmpf olt, [[Y]], %cst{{.*}} : f32
// FUSED-NEXT: arith.select [[NEG]], %cst{{.*}}, [[Y]] : f32
// FUSED-NEXT: linalg.yield
// FUSED: call @kcc_rt_conv2d_f32
