// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Adam's learning-rate factor: a scalar computed with pow and sqrt, then
// broadcast over a parameter. Fusing it would run pow and sqrt once per
// parameter element; the cost rule keeps it a separate (scalar) kernel and
// says why.
// CHECK-LABEL: func.func @scalar_factor(
// CHECK: math.powf
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK-NOT: math.powf
// CHECK: return
func.func @scalar_factor(%p: tensor<256x128xf32>, %g: tensor<256x128xf32>,
                         %beta: tensor<f32>, %t: tensor<f32>) -> tensor<256x128xf32> {
  %0 = kc.pow %beta, %t : tensor<f32>
  %1 = kc.sqrt %0 : tensor<f32>
  %2 = kc.broadcast_to %1 : tensor<f32> -> tensor<256x128xf32>
  %3 = kc.mul %2, %g : tensor<256x128xf32>
  // REMARK: :[[# @LINE + 1]]:8: remark: not fused with operand #{{[0-9]+}}: the producer is read through a broadcast and computes math functions or divisions
  %4 = kc.sub %p, %3 : tensor<256x128xf32>
  return %4 : tensor<256x128xf32>
}

// -----

// A row statistic broadcast over ten classes is recomputed ten times at
// most: cheaper than a kernel, so it is fused, and the remark counts the
// bytes the fused producers never write.
// REMARK: remark: elementwise fusion: a producer at {{.*}} fused into its consumer; 256 B never written to memory
// CHECK-LABEL: func.func @row_factor(
// CHECK-COUNT-1: linalg.generic
// CHECK-NOT: linalg.generic
func.func @row_factor(%x: tensor<64x10xf32>, %s: tensor<64x1xf32>) -> tensor<64x10xf32> {
  %0 = kc.log %s : tensor<64x1xf32>
  %1 = kc.broadcast_to %0 : tensor<64x1xf32> -> tensor<64x10xf32>
  %2 = kc.sub %x, %1 : tensor<64x10xf32>
  return %2 : tensor<64x10xf32>
}
