// RUN: rm -rf %t && mkdir -p %t
// A missing input.
// RUN: not kcc %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kcc --model=mlp %t/missing.json 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not kcc --emit=kc %t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING-SPEC
// A shape error, with its location.
// RUN: not kcc --emit=obj %S/Inputs/shape-error.mlir -o %t/bad.o 2>&1 | FileCheck %s --check-prefix=SHAPE
// A Keras spec whose weights do not fit the layer.
// RUN: not kcc %kcc_src/tests/fixtures/keras/bad_weight_shape.keras 2>&1 | FileCheck %s --check-prefix=KERAS
// An unknown --emit, --model, loss.
// RUN: not kcc --emit=asm %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not kcc --model=vgg 2>&1 | FileCheck %s --check-prefix=MODEL
// RUN: not kcc --emit=train --loss=not_a_loss %S/Inputs/dense.mlir -o %t/bad.mlir 2>&1 | FileCheck %s --check-prefix=LOSS
// An unwritable -o, an object to stdout, a bad CPU.
// RUN: not kcc --emit=obj %S/Inputs/dense.mlir -o %t/no/such/dir/x.o 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not kcc --emit=obj %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=STDOUT
// RUN: not kcc --emit=obj --mcpu=nosuchcpu %S/Inputs/dense.mlir -o %t/cpu.o 2>&1 | FileCheck %s --check-prefix=CPU
// Nothing was written, not even a temporary.
// RUN: ls %t | count 0

// MISSING: kcc: error: cannot open input file '{{.*}}missing.mlir'
// BOTH: kcc: error: give either a model file or --model, not both
// MISSING-SPEC: kcc: error: cannot open input file '{{.*}}missing.json'
// SHAPE: shape-error.mlir:4:8: error: 'kc.matmul' op expects lhs columns (784) to match rhs rows (100)
// KERAS: kcc: error: {{.*}}bad_weight_shape.keras
// EMIT: for the --emit option: Cannot find option named 'asm'!
// MODEL: kcc: error: unknown --model 'vgg' (expected mlp, cnn or residual)
// LOSS: kcc: error: compile: unknown loss 'not_a_loss'
// UNWRITABLE: kcc: error: cannot write '{{.*}}x.o': No such file or directory
// STDOUT: kcc: error: --emit=obj needs an output file (-o)
// CPU: kcc: error: unknown CPU 'nosuchcpu'
