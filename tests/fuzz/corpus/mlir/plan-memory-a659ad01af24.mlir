func.func @escapes(%x: memref<4xf32>) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%r : memref<4xf32>)
  return %r : memref<4xf32>
}
