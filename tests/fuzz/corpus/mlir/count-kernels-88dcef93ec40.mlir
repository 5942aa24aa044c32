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
