// RUN: kcc-opt %s | kcc-opt | FileCheck %s
// RUN: kcc-opt %s --mlir-print-op-generic | kcc-opt | FileCheck %s

// CHECK-LABEL: func.func @image_transform
func.func @image_transform(%x: tensor<4x28x28x1xf32>, %t: tensor<4x8xf32>, %g: tensor<4x20x22x1xf32>) -> (tensor<4x20x22x1xf32>, tensor<4x28x28x1xf32>) {
  // CHECK: kc.image_transform %{{.*}}, %{{.*}} {fill_mode = "wrap", fill_value = 5.000000e-01 : f64, interpolation = "nearest"} : tensor<4x28x28x1xf32>, tensor<4x8xf32> -> tensor<4x20x22x1xf32>
  %0 = kc.image_transform %x, %t {fill_mode = "wrap", fill_value = 0.5 : f64, interpolation = "nearest"} : tensor<4x28x28x1xf32>, tensor<4x8xf32> -> tensor<4x20x22x1xf32>
  // CHECK: kc.image_transform_grad %{{.*}}, %{{.*}} {fill_mode = "wrap", fill_value = 5.000000e-01 : f64, interpolation = "nearest"} : tensor<4x8xf32>, tensor<4x20x22x1xf32> -> tensor<4x28x28x1xf32>
  %1 = kc.image_transform_grad %t, %g {fill_mode = "wrap", fill_value = 0.5 : f64, interpolation = "nearest"} : tensor<4x8xf32>, tensor<4x20x22x1xf32> -> tensor<4x28x28x1xf32>
  return %0, %1 : tensor<4x20x22x1xf32>, tensor<4x28x28x1xf32>
}
