// RUN: kcc-opt %s --split-input-file --kc-expand-math | FileCheck %s

// An f32 tanh, scalar or vector, becomes runtime/kernels/Tanh.h's
// arithmetic: the clamp, the two polynomials as fma chains (6 + 3), the
// division, and the input itself near 0.
// CHECK-LABEL: func.func @scalar
// CHECK-NOT: math.tanh
// CHECK-DAG: arith.cmpf olt, %{{.*}}, %[[LO:.*]] : f32
// CHECK-DAG: arith.cmpf ogt, %{{.*}}, %[[HI:.*]] : f32
// CHECK-DAG: %[[LO]] = arith.constant -7.90531111 : f32
// CHECK-DAG: %[[HI]] = arith.constant 7.90531111 : f32
// CHECK-COUNT-6: math.fma
// CHECK-COUNT-3: math.fma
// CHECK: arith.divf
// CHECK: math.absf
// CHECK: arith.select
// CHECK-NOT: math.tanh
func.func @scalar(%x: f32) -> f32 {
  %y = math.tanh %x : f32
  return %y : f32
}

// -----

// CHECK-LABEL: func.func @vector
// CHECK-NOT: math.tanh
// CHECK: arith.constant dense<7.90531111> : vector<8xf32>
// CHECK-COUNT-9: math.fma {{.*}} : vector<8xf32>
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %y = math.tanh %x : vector<8xf32>
  return %y : vector<8xf32>
}

// -----

// f64 (the gradient checks) keeps libm's tanh.
// CHECK-LABEL: func.func @f64
// CHECK: math.tanh
// CHECK-NOT: math.fma
func.func @f64(%x: f64) -> f64 {
  %y = math.tanh %x : f64
  return %y : f64
}
