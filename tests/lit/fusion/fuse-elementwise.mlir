// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg --kc-fuse-elementwise=multi-use=false | FileCheck %s --check-prefix=SINGLE

// A momentum update: the new moment %m is returned and feeds the parameter
// update. Fused into one loop nest yielding both (upstream's single-use rule
// leaves two).
// CHECK-LABEL: func.func @momentum(
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#{{[01]}}, %[[R]]#{{[01]}}
// SINGLE-LABEL: func.func @momentum(
// SINGLE-COUNT-2: linalg.generic
func.func @momentum(%p: tensor<64x32xf32>, %m: tensor<64x32xf32>, %g: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %0 = kc.mul %m, %m : tensor<64x32xf32>
  %1 = kc.add %0, %g : tensor<64x32xf32>
  %2 = kc.sub %p, %1 : tensor<64x32xf32>
  return %2, %1 : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// Refused: %1 has a user (the reduction) before the elementwise consumer,
// which would have to move above the fused op.
// CHECK-LABEL: func.func @user_before_consumer(
// CHECK-COUNT-3: linalg.generic
func.func @user_before_consumer(%a: tensor<64x32xf32>, %b: tensor<64x32xf32>)
    -> (tensor<64xf32>, tensor<64x32xf32>) {
  %0 = kc.mul %a, %b : tensor<64x32xf32>
  %1 = kc.exp %0 : tensor<64x32xf32>
  %2 = kc.reduce_sum %1 {axes = array<i64: 1>} : tensor<64x32xf32> -> tensor<64xf32>
  %3 = kc.add %1, %a : tensor<64x32xf32>
  return %2, %3 : tensor<64xf32>, tensor<64x32xf32>
}
