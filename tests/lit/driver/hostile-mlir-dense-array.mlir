// A dense array whose storage does not hold its elements (the mlir
// fuzzer's reproducer): MLIR 19 prints it out of bounds, so kcc checks the
// parsed module before verifying it; the file gets a located error.
// RUN: not %limit-as kcc --emit=kc %kcc_src/tests/fuzz/findings/mlir-mlir19-dense-array-i01.mlir 2>&1 | FileCheck %s
// CHECK: mlir-mlir19-dense-array-i01.mlir:2:8: error: malformed dense array attribute in 'kc.reduce_mean'
