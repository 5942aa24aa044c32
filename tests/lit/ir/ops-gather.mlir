// RUN: kcc-opt %s | kcc-opt | FileCheck %s
// RUN: kcc-opt %s --mlir-print-op-generic | kcc-opt | FileCheck %s

// CHECK-LABEL: func.func @embedding
func.func @embedding(%t: tensor<50x8xf32>, %ids: tensor<32x48xi32>, %g: tensor<32x48x8xf32>) -> (tensor<32x48x8xf32>, tensor<50x8xf32>) {
  // CHECK: kc.gather %{{.*}}, %{{.*}} : tensor<50x8xf32>, tensor<32x48xi32> -> tensor<32x48x8xf32>
  %e = kc.gather %t, %ids : tensor<50x8xf32>, tensor<32x48xi32> -> tensor<32x48x8xf32>
  // CHECK: kc.gather_grad %{{.*}}, %{{.*}} : tensor<32x48xi32>, tensor<32x48x8xf32> -> tensor<50x8xf32>
  %dt = kc.gather_grad %ids, %g : tensor<32x48xi32>, tensor<32x48x8xf32> -> tensor<50x8xf32>
  return %e, %dt : tensor<32x48x8xf32>, tensor<50x8xf32>
}
