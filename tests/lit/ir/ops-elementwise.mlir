// RUN: kcc-opt %s | kcc-opt | FileCheck %s
// RUN: kcc-opt %s --mlir-print-op-generic | kcc-opt | FileCheck %s

// CHECK-LABEL: func.func @binary
func.func @binary(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // CHECK: kc.add %{{.*}}, %{{.*}} : tensor<4x3xf32>
  %0 = kc.add %a, %b : tensor<4x3xf32>
  // CHECK: kc.sub
  %1 = kc.sub %0, %b : tensor<4x3xf32>
  // CHECK: kc.mul
  %2 = kc.mul %1, %b : tensor<4x3xf32>
  // CHECK: kc.div
  %3 = kc.div %2, %b : tensor<4x3xf32>
  // CHECK: kc.pow
  %4 = kc.pow %3, %b : tensor<4x3xf32>
  // CHECK: kc.max
  %5 = kc.max %4, %b : tensor<4x3xf32>
  // CHECK: kc.min
  %6 = kc.min %5, %b : tensor<4x3xf32>
  return %6 : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<8xf64>) -> tensor<8xf64> {
  // CHECK: kc.neg %{{.*}} : tensor<8xf64>
  %0 = kc.neg %x : tensor<8xf64>
  %1 = kc.exp %0 : tensor<8xf64>
  %2 = kc.log %1 : tensor<8xf64>
  %3 = kc.sqrt %2 : tensor<8xf64>
  %4 = kc.rsqrt %3 : tensor<8xf64>
  %5 = kc.abs %4 : tensor<8xf64>
  %6 = kc.relu %5 : tensor<8xf64>
  %7 = kc.sigmoid %6 : tensor<8xf64>
  // CHECK: kc.tanh
  %8 = kc.tanh %7 : tensor<8xf64>
  // CHECK: kc.gelu %{{.*}} : tensor<8xf64>
  %9 = kc.gelu %8 : tensor<8xf64>
  // CHECK: kc.gelu %{{.*}} {approximate = true} : tensor<8xf64>
  %10 = kc.gelu %9 {approximate = true} : tensor<8xf64>
  return %10 : tensor<8xf64>
}

// Lower-precision types are accepted for later backends.
// CHECK-LABEL: func.func @half_types
func.func @half_types(%x: tensor<8xbf16>, %y: tensor<8xf16>) -> (tensor<8xbf16>, tensor<8xf16>) {
  // CHECK: kc.relu %{{.*}} : tensor<8xbf16>
  %0 = kc.relu %x : tensor<8xbf16>
  // CHECK: kc.exp %{{.*}} : tensor<8xf16>
  %1 = kc.exp %y : tensor<8xf16>
  return %0, %1 : tensor<8xbf16>, tensor<8xf16>
}

// CHECK-LABEL: func.func @compare_select_cast
func.func @compare_select_cast(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: kc.compare gt, %{{.*}}, %{{.*}} : tensor<4xf32> -> tensor<4xi1>
  %m = kc.compare gt, %a, %b : tensor<4xf32> -> tensor<4xi1>
  // CHECK: kc.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<4xi1>, tensor<4xf32>
  %s = kc.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
  // CHECK: kc.cast %{{.*}} : tensor<4xi64> -> tensor<4xf32>
  %c = kc.cast %i : tensor<4xi64> -> tensor<4xf32>
  return %s, %c : tensor<4xf32>, tensor<4xf32>
}
