// RUN: kcc-opt %s --kc-count-kernels=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: kcc-opt %s --kc-count-kernels | FileCheck %s

// Kernels are library calls plus top-level loop nests; a loop inside a
// loop nest belongs to it, and views and constants are no kernels.
// REMARK: remark: 3 kernels: 1 library calls, 2 loop nests
// CHECK-LABEL: func.func @step(
// CHECK-SAME: kc.kernels = 3 : i64
// CHECK-SAME: kc.library_calls = 1 : i64
// CHECK-SAME: kc.loop_nests = 2 : i64
func.func @step(%x: memref<8xf32>, %y: memref<8xf32>, %p: !llvm.ptr) {
  func.call @kcc_rt_matmul_f32(%p) : (!llvm.ptr) -> ()
  linalg.copy ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c8 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
    }
  }
  %v = memref.expand_shape %y [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  return
}
func.func private @kcc_rt_matmul_f32(!llvm.ptr)
