func.func @pointers(%x: memref<64xf32>, %out: memref<64xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  %p = memref.extract_aligned_pointer_as_index %b : memref<64xf32> -> index
  %i = arith.index_cast %p : index to i64
  %q = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @use(%q) : (!llvm.ptr) -> ()
  linalg.copy ins(%b : memref<64xf32>) outs(%out : memref<64xf32>)
  return
}
func.func private @use(!llvm.ptr)
