// An MLP written by Keras under mixed_bfloat16, its softmax a float32
// Activation: the train step reads the f32 weights as bf16, multiplies in
// bf16, casts the logits back to f32 for the softmax and the loss, and each
// weight's gradient comes back to f32 for the optimizer (master weights).
// RUN: kcc --emit=train %kcc_src/tests/fixtures/keras/mixed_mlp.keras | FileCheck %s
// The same float32 model under --dtype-policy computes in bf16 throughout.
// RUN: kcc --emit=kc --model=mlp --dtype-policy=mixed_bfloat16 | FileCheck %s --check-prefix=FLAG
// RUN: not kcc --emit=kc --model=mlp --dtype-policy=mixed_float16 2>&1 | FileCheck %s --check-prefix=BAD
// A model trained under the flag saves the policy with each layer (as
// Keras writes it), so reading the file back computes in bf16 again.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:16,28,28,1 y=i8:16:labels:10
// RUN: kcc train --model=mlp --dtype-policy=mixed_bfloat16 --data %t/d.npz --batch 8 --epochs 1 --verbose 0 --save %t/m.keras
// RUN: kcc --emit=kc %t/m.keras | FileCheck %s --check-prefix=FLAG
// The fusion report says where the step computes in bf16.
// RUN: kcc --fusion-report %kcc_src/tests/fixtures/keras/mixed_mlp.keras | FileCheck %s --check-prefix=REPORT

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

// REPORT: mixed precision (bf16 products on oneDNN, f32 compute elsewhere: kc-widen-bf16)
// REPORT: [dense] 1 bf16 products; 3 ops in f32 on bf16 tensors
// REPORT: [dense/grad] 1 bf16 products; 3 ops in f32 on bf16 tensors
