// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise | FileCheck %s

// Keras's activations are compositions of kc ops (frontend/ops/
// Activations.cpp); kc-fuse-elementwise turns each into a single loop.
// elu(x, 0.5) as the frontend traces it: exp of min(x, 0), selected by
// x > 0.
// CHECK-LABEL: func.func @elu(
// CHECK: linalg.generic
// CHECK-DAG: math.exp
// CHECK-DAG: arith.select
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @elu(%x: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %zero = kc.constant dense<0.0> : tensor<32x8xf32>
  %one = kc.constant dense<1.0> : tensor<32x8xf32>
  %alpha = kc.constant dense<0.5> : tensor<32x8xf32>
  %0 = kc.min %x, %zero : tensor<32x8xf32>
  %1 = kc.exp %0 : tensor<32x8xf32>
  %2 = kc.sub %1, %one : tensor<32x8xf32>
  %3 = kc.mul %alpha, %2 : tensor<32x8xf32>
  %4 = kc.compare gt, %x, %zero : tensor<32x8xf32> -> tensor<32x8xi1>
  %5 = kc.select %4, %x, %3 : tensor<32x8xi1>, tensor<32x8xf32>
  return %5 : tensor<32x8xf32>
}

// -----

// mish(x) = x * tanh(softplus(x)), softplus = max(x, 0) + log(1 + exp(-|x|)).
// CHECK-LABEL: func.func @mish(
// CHECK: linalg.generic
// CHECK-DAG: math.exp
// CHECK-DAG: math.log
// CHECK-DAG: math.tanh
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @mish(%x: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %zero = kc.constant dense<0.0> : tensor<32x8xf32>
  %one = kc.constant dense<1.0> : tensor<32x8xf32>
  %0 = kc.abs %x : tensor<32x8xf32>
  %1 = kc.neg %0 : tensor<32x8xf32>
  %2 = kc.exp %1 : tensor<32x8xf32>
  %3 = kc.add %one, %2 : tensor<32x8xf32>
  %4 = kc.log %3 : tensor<32x8xf32>
  %5 = kc.max %x, %zero : tensor<32x8xf32>
  %6 = kc.add %5, %4 : tensor<32x8xf32>
  %7 = kc.tanh %6 : tensor<32x8xf32>
  %8 = kc.mul %x, %7 : tensor<32x8xf32>
  return %8 : tensor<32x8xf32>
}
