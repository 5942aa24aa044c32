// An MLP written by Keras under mixed_bfloat16, its softmax a float32
// Activation: the train step reads the f32 weights as bf16, multiplies in
// bf16, casts the logits back to f32 for the softmax and the loss, and each
// weight's gradient comes back to f32 for the optimizer (master weights).
// RUN: kcc --emit=train %kcc_src/tests/fixtures/keras/mixed_mlp.keras | FileCheck %s
// The same float32 model under --dtype-policy computes in bf16 throughout.
// RUN: kcc --emit=kc --model=mlp --dtype-policy=mixed_bfloat16 | FileCheck %s --check-prefix=FLAG
// RUN: not kcc --emit=kc --model=mlp --dtype-policy=mixed_float16 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @train_step
// CHECK: kc.cast %{{.*}} : tensor<784x128xf32> -> tensor<784x128xbf16>
// CHECK: kc.matmul {{.*}} -> tensor<32x128xbf16>
// CHECK: kc.cast %{{.*}} : tensor<32x10xbf16> -> tensor<32x10xf32>
// CHECK: kc.softmax {{.*}} : tensor<32x10xf32>
// CHECK: kc.cast %{{.*}} : tensor<784x128xbf16> -> tensor<784x128xf32>

// FLAG-LABEL: func.func @forward
// FLAG: kc.matmul {{.*}} : tensor<32x784xbf16>, tensor<784x128xbf16> -> tensor<32x128xbf16>
// FLAG: return {{.*}} : tensor<32x10xf32>

// BAD: dtype policy 'mixed_float16' is not supported (float32 or mixed_bfloat16)
