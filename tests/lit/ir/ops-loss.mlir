// RUN: kcc-opt %s | kcc-opt | FileCheck %s
// RUN: kcc-opt %s --mlir-print-op-generic | kcc-opt | FileCheck %s

// CHECK-LABEL: func.func @ctc
func.func @ctc(%x: tensor<4x20x6xf32>, %l: tensor<4x7xi32>, %g: tensor<4xf32>) -> (tensor<4xf32>, tensor<4x20x6xf32>) {
  // CHECK: kc.ctc_loss %{{.*}}, %{{.*}} : tensor<4x20x6xf32>, tensor<4x7xi32> -> tensor<4xf32>
  %0 = kc.ctc_loss %x, %l : tensor<4x20x6xf32>, tensor<4x7xi32> -> tensor<4xf32>
  // CHECK: kc.ctc_loss_grad %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x20x6xf32>, tensor<4x7xi32>, tensor<4xf32> -> tensor<4x20x6xf32>
  %1 = kc.ctc_loss_grad %x, %l, %g : tensor<4x20x6xf32>, tensor<4x7xi32>, tensor<4xf32> -> tensor<4x20x6xf32>
  return %0, %1 : tensor<4xf32>, tensor<4x20x6xf32>
}
