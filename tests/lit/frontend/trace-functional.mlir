// Golden test of the IR traced from the reference functional model with a
// residual Add (examples/models): the Add reuses the first Dense's output.
// RUN: kcc --model=residual --batch=8 --emit=kc --mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @forward(
// CHECK: %[[H1:.*]] = kc.relu %{{.*}} : tensor<8x64xf32> loc(#[[D0:loc[0-9]+]])
// CHECK: kc.matmul %[[H1]], %{{.*}} : tensor<8x64xf32>, tensor<64x64xf32> -> tensor<8x64xf32> loc(#[[D1:loc[0-9]+]])
// CHECK: kc.relu %{{.*}} : tensor<8x64xf32> loc(#[[D1]])
// CHECK: %[[H3:.*]] = kc.relu %{{.*}} : tensor<8x64xf32> loc(#[[D2:loc[0-9]+]])
// CHECK: %[[SUM:.*]] = kc.add %[[H3]], %[[H1]] : tensor<8x64xf32> loc(#[[ADD:loc[0-9]+]])
// CHECK: kc.matmul %[[SUM]], %{{.*}} : tensor<8x64xf32>, tensor<64x10xf32> -> tensor<8x10xf32>
// CHECK: #[[D0]] = loc("dense")
// CHECK: #[[D1]] = loc("dense_1")
// CHECK: #[[D2]] = loc("dense_2")
// CHECK: #[[ADD]] = loc("add")
