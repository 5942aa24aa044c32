// RUN: kcc --version | FileCheck %s --check-prefix=VERSION
// RUN: kcc --help | FileCheck %s --check-prefix=HELP
// RUN: kcc train --help | FileCheck %s --check-prefix=TRAIN
// RUN: kcc --emit=kc --mlir-print-ir-after-all %S/Inputs/dense.mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINT
// kcc's own options only, in few lines; LLVM's and MLIR's under --help-hidden.
// RUN: kcc --help | awk 'END { exit NR > 100 }'
// RUN: kcc train --help | awk 'END { exit NR > 100 }'
// RUN: kcc bench --help | awk 'END { exit NR > 100 }'
// RUN: kcc --help | FileCheck %s --check-prefix=SHORT
// RUN: kcc --help-hidden | FileCheck %s --check-prefix=HIDDEN
// An unknown option gets a suggestion.
// RUN: not kcc train --epoch 3 2>&1 | FileCheck %s --check-prefix=SUGGEST
// Numeric flags are checked: range and finite.
// RUN: not kcc train --model=mlp --steps-per-epoch -1 2>&1 | FileCheck %s --check-prefix=STEPS
// RUN: not kcc train --model=mlp --validation-freq 0 2>&1 | FileCheck %s --check-prefix=VFREQ
// RUN: not kcc train --model=mlp --lr nan 2>&1 | FileCheck %s --check-prefix=LRNAN
// RUN: not kcc train --model=mlp --lr -1 2>&1 | FileCheck %s --check-prefix=LRNEG
// RUN: not kcc bench --model=mlp --warmup -3 2>&1 | FileCheck %s --check-prefix=WARMUP
// RUN: not kcc --model=mlp --batch 0 2>&1 | FileCheck %s --check-prefix=BATCH

// VERSION: kcc {{[0-9]+\.[0-9]+\.[0-9]+}} (MLIR/LLVM 19{{.*}}, oneDNN {{[0-9]+\.[0-9]+}}

// HELP: SUBCOMMANDS:
// HELP: bench
// HELP: train
// HELP: --dump-dir=<dir>
// HELP: --emit=<value>
// HELP: =kc
// HELP: =train
// HELP: =linalg
// HELP: =llvm-mlir
// HELP: =llvm
// HELP: =obj
// HELP: =lib
// HELP: --mattr
// HELP: --mcpu

// SHORT-NOT: --mlir-print-ir-after-all
// SHORT-NOT: --nvptx
// SHORT: --help-hidden: also LLVM's and MLIR's own options
// HIDDEN: --mlir-print-ir-after-all

// SUGGEST: Did you mean '--epochs'?
// STEPS: error: --steps-per-epoch must be 0 (every batch) or more, got -1
// VFREQ: error: --validation-freq must be at least 1, got 0
// LRNAN: error: --lr must be a positive finite number, got nan
// LRNEG: error: --lr must be a positive finite number, got -1
// WARMUP: error: --warmup must be 0 or more, got -3
// BATCH: error: --batch must be at least 1, got 0

// TRAIN: --data
// TRAIN: --epochs
// TRAIN: --mode=<value>
// TRAIN: =compiled
// TRAIN: =interpreted

// MLIR's own options work.
// PRINT: IR Dump After Canonicalizer
