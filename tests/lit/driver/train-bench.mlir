// RUN: kcc train --model=mlp --data fashion-mnist --epochs 2 --steps-per-epoch 40 --batch 32 | FileCheck %s
// RUN: kcc train --model=mlp --mode=interpreted --epochs 1 --steps-per-epoch 5 --batch 16 | FileCheck %s --check-prefix=INTERP
// RUN: kcc train --model=mlp --mode=both --epochs 1 --steps-per-epoch 20 | FileCheck %s --check-prefix=BOTH
// RUN: kcc bench --model=mlp --batch 16 --json --repetitions 1 --steps 2 --warmup 1 | FileCheck %s --check-prefix=JSON
// RUN: not kcc train --model=mlp --data cifar 2>&1 | FileCheck %s --check-prefix=DATA

// CHECK: Epoch 1/2
// CHECK-NEXT: 40/40 [==============================] - {{[0-9]+}}s {{[0-9]+(s|ms|us)}}/step - loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}}
// CHECK: Epoch 2/2
// CHECK: test accuracy: {{0\.[0-9]+}} (10000 examples)

// INTERP: interpreted, batch 16
// INTERP: 5/5 [==============================]

// Both modes from the same initial weights on the same batches: the same
// model, so the same test accuracy to the printed digit.
// BOTH: compiled, batch 32
// BOTH: test accuracy: [[ACC:0\.[0-9]+]]
// BOTH: interpreted, batch 32
// BOTH: test accuracy: [[ACC]]
// BOTH: same initial weights, same batches:
// BOTH-NEXT: compiled: loss [[LOSS:[0-9]\.[0-9]+]] test accuracy [[ACC]]
// BOTH-NEXT: interpreted: loss [[LOSS]] test accuracy [[ACC]]
// BOTH-NEXT: interpreted / compiled time per step: {{[0-9.]+}}x; accuracy differs by 0.00 points; loss by {{.*}} (relative)

// JSON: "arena_bytes":
// JSON: "arena_lower_bound_bytes":
// JSON: "compile_ms":
// JSON: "compiled_cpu_ms":
// JSON: "compiled_ms":
// JSON: "interpreted_ms":
// JSON: "interpreted_ops":
// JSON: "kernels":
// JSON: "ratio":

// DATA: kcc: error: cifar: no such file or directory
