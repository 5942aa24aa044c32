// --cold-work sets kc-mark-cold-functions' threshold: by default the dense
// step's functions do little work a call and are cold (unoptimized machine
// code); 0 marks none, 1 none either (every function executes an op); a
// negative count is an error, and kcc train does not take the flag.
// RUN: kcc --emit=llvm-mlir %S/Inputs/dense.mlir | FileCheck %s --check-prefix=DEFAULT
// RUN: kcc --emit=llvm-mlir --cold-work=0 %S/Inputs/dense.mlir | FileCheck %s --check-prefix=NONE
// RUN: kcc --emit=llvm-mlir --cold-work=1 %S/Inputs/dense.mlir | FileCheck %s --check-prefix=NONE
// RUN: not kcc --emit=obj --cold-work=-1 %S/Inputs/dense.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not test -e %t.o
// RUN: not kcc train --model=mlp --cold-work=0 2>&1 | FileCheck %s --check-prefix=TRAIN

// DEFAULT: llvm.func @train_step({{.*}}kc.cold
// NONE-NOT: kc.cold
// NEGATIVE: kcc: error: --cold-work must be 0 (no function cold) or more, got -1
// TRAIN: kcc: error: --cold-work is not an option of kcc train: it is one of the compile command (kcc <model>) and kcc bench
