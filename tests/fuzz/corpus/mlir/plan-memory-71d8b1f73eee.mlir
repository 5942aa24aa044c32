func.func @views(%x: memref<16x16xf32>, %y: memref<8xf32>, %out: memref<256xf32>, %out2: memref<8xf32>) {
  %big = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
  linalg.copy ins(%x : memref<16x16xf32>) outs(%big : memref<16x16xf32>)
  %flat = memref.collapse_shape %big [[0, 1]] : memref<16x16xf32> into memref<256xf32>
  %s = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.copy ins(%y : memref<8xf32>) outs(%s : memref<8xf32>)
  linalg.copy ins(%s : memref<8xf32>) outs(%out2 : memref<8xf32>)
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.copy ins(%y : memref<8xf32>) outs(%t : memref<8xf32>)
  linalg.copy ins(%t : memref<8xf32>) outs(%out2 : memref<8xf32>)
  linalg.copy ins(%flat : memref<256xf32>) outs(%out : memref<256xf32>)
  return
}
