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

// -----

// exp: k = rint(x / ln2) by adding 1.5 * 2^23 (k from the sum's bits), the
// two-part reduction, Cephes' polynomial (6 coefficients), 2^k in two
// factors built in the exponent bits, then +inf above 104 and 0 below -104.
// CHECK-LABEL: func.func @exp
// CHECK-NOT: math.exp
// CHECK: %[[T:.*]] = math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: arith.bitcast %[[T]] : vector<8xf32> to vector<8xi32>
// CHECK-COUNT-5: math.fma {{.*}} : vector<8xf32>
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.bitcast {{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf ogt
// CHECK-NOT: math.exp
func.func @exp(%x: vector<8xf32>) -> vector<8xf32> {
  %y = math.exp %x : vector<8xf32>
  return %y : vector<8xf32>
}

// -----

// expm1 shares exp's reduction and polynomial and keeps x itself near 0.
// CHECK-LABEL: func.func @expm1
// CHECK-NOT: math.expm1
// CHECK: math.absf
// CHECK: arith.select
// CHECK-NOT: math.expm1
func.func @expm1(%x: f32) -> f32 {
  %y = math.expm1 %x : f32
  return %y : f32
}

// -----

// log: subnormals scaled by 2^23, the exponent and mantissa from the bits,
// s = f / (2 + f), the polynomial, k ln2 in two parts; NaN below 0 (an
// unordered compare, so NaN too), -inf at 0, +inf at +inf.
// CHECK-LABEL: func.func @log
// CHECK-NOT: math.log
// CHECK: arith.shrui
// CHECK: arith.andi
// CHECK-DAG: arith.sitofp
// CHECK-DAG: arith.divf
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf oeq
// CHECK: arith.cmpf ult
// CHECK-NOT: math.log
func.func @log(%x: vector<4xf32>) -> vector<4xf32> {
  %y = math.log %x : vector<4xf32>
  return %y : vector<4xf32>
}

// -----

// log1p: the correction for the rounding of 1 + x, picked by the exponent.
// CHECK-LABEL: func.func @log1p
// CHECK-NOT: math.log1p
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
// CHECK: arith.cmpi eq
// CHECK-NOT: math.log1p
func.func @log1p(%x: f32) -> f32 {
  %y = math.log1p %x : f32
  return %y : f32
}

// -----

// erf: both fits, the large one through the exp expansion, then a select.
// CHECK-LABEL: func.func @erf
// CHECK-NOT: math.erf
// CHECK-NOT: math.exp
// CHECK: math.copysign
// CHECK: arith.cmpf ogt, %{{.*}}, %[[SPLIT:.*]] : vector<8xf32>
// CHECK-NOT: math.erf
func.func @erf(%x: vector<8xf32>) -> vector<8xf32> {
  %y = math.erf %x : vector<8xf32>
  return %y : vector<8xf32>
}

// -----

// f64 keeps libm for all of them.
// CHECK-LABEL: func.func @f64_all
// CHECK: math.exp
// CHECK: math.expm1
// CHECK: math.log
// CHECK: math.log1p
// CHECK: math.erf
// CHECK-NOT: math.fma
func.func @f64_all(%x: f64) -> f64 {
  %a = math.exp %x : f64
  %b = math.expm1 %a : f64
  %c = math.log %b : f64
  %d = math.log1p %c : f64
  %e = math.erf %d : f64
  return %e : f64
}
