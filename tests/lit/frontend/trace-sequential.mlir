// Golden test of the IR traced from the reference Sequential MLP
// (examples/models: Input(28,28,1) -> Flatten -> Dense(128, relu) ->
// Dense(64, relu) -> Dense(10, softmax)), and of its Keras 3 spec, which must
// trace to the same IR through the same layer API.
// RUN: kcc --model=mlp --batch=32 --emit=kc --mlir-print-debuginfo | FileCheck %s
// RUN: kcc %kcc_src/examples/mlp.json --batch=32 --emit=kc --mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[K0:.*]]: tensor<784x128xf32> {kc.name = "dense/kernel", kc.trainable = true}
// CHECK-SAME: %[[B0:.*]]: tensor<128xf32> {kc.name = "dense/bias", kc.trainable = true}
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<32x28x28x1xf32> {kc.input = 0 : i64}
// CHECK: %[[F:.*]] = kc.reshape %[[X]] : tensor<32x28x28x1xf32> -> tensor<32x784xf32> loc(#[[FLATTEN:loc[0-9]+]])
// CHECK: %[[M:.*]] = kc.matmul %[[F]], %[[K0]] : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32> loc(#[[DENSE:loc[0-9]+]])
// CHECK: %[[BB:.*]] = kc.broadcast_to %[[B0]] : tensor<128xf32> -> tensor<32x128xf32> loc(#[[DENSE]])
// CHECK: %[[A:.*]] = kc.add %[[M]], %[[BB]] : tensor<32x128xf32> loc(#[[DENSE]])
// CHECK: kc.relu %[[A]] : tensor<32x128xf32> loc(#[[DENSE]])
// CHECK-COUNT-2: kc.matmul
// CHECK: kc.softmax %{{.*}} {axis = 1 : i64} : tensor<32x10xf32> loc(#[[DENSE2:loc[0-9]+]])
// CHECK: #[[FLATTEN]] = loc("flatten")
// CHECK: #[[DENSE]] = loc("dense")
// CHECK: #[[DENSE2]] = loc("dense_2")
