// RUN: kcc --version | FileCheck %s --check-prefix=VERSION
// RUN: kcc --help | FileCheck %s --check-prefix=HELP
// RUN: kcc train --help | FileCheck %s --check-prefix=TRAIN
// RUN: kcc --emit=kc --mlir-print-ir-after-all %S/Inputs/dense.mlir 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINT

// VERSION: kcc {{[0-9]+\.[0-9]+\.[0-9]+}} (MLIR/LLVM 19

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
// HELP: --mlir-print-ir-after-all

// TRAIN: --data
// TRAIN: --epochs
// TRAIN: --mode=<value>
// TRAIN: =compiled
// TRAIN: =interpreted

// MLIR's own options work.
// PRINT: IR Dump After Canonicalizer
