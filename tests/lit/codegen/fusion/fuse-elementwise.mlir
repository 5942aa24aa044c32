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

// -----

// Two independent updates read one broadcast of the learning rate. Each
// gets its own copy of it, folded in: two loop nests reading %lr directly,
// neither yielding the broadcast (shared, it merged every such update into
// one op, one layer at a time).
// CHECK-LABEL: func.func @shared_broadcast(
// CHECK-COUNT-2: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<64x32xf32>, tensor<f32>)
// CHECK-NOT: linalg.generic
func.func @shared_broadcast(%p: tensor<64x32xf32>, %q: tensor<64x32xf32>,
                            %g: tensor<64x32xf32>, %h: tensor<64x32xf32>,
                            %lr: tensor<f32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %b = kc.broadcast_to %lr : tensor<f32> -> tensor<64x32xf32>
  %0 = kc.mul %g, %b : tensor<64x32xf32>
  %1 = kc.sub %p, %0 : tensor<64x32xf32>
  %2 = kc.mul %h, %b : tensor<64x32xf32>
  %3 = kc.sub %q, %2 : tensor<64x32xf32>
  return %1, %3 : tensor<64x32xf32>, tensor<64x32xf32>
}

// -----

// A consumer that reads a producer twice (the same result, or two results
// of an op grown by fusion) takes one copy of its body: fused one operand
// at a time, the producer stayed for the other and was copied again, and
// on a DAG that reuses its values (an RGB -> HSV conversion) the copies
// multiplied at each level.
// CHECK-LABEL: func.func @square_of_exp(
// CHECK: linalg.generic
// CHECK-COUNT-1: math.exp
// CHECK-NOT: math.exp
// CHECK-NOT: linalg.generic
func.func @square_of_exp(%a: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = kc.exp %a : tensor<64x32xf32>
  %1 = kc.mul %0, %0 : tensor<64x32xf32>
  return %1 : tensor<64x32xf32>
}

// -----

// CHECK-LABEL: func.func @diamond(
// CHECK: linalg.generic
// CHECK-COUNT-1: math.exp
// CHECK-NOT: math.exp
// CHECK-NOT: linalg.generic
func.func @diamond(%a: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %0 = kc.exp %a : tensor<64x32xf32>
  %1 = kc.neg %0 : tensor<64x32xf32>
  %2 = kc.mul %0, %1 : tensor<64x32xf32>
  return %2 : tensor<64x32xf32>
}
