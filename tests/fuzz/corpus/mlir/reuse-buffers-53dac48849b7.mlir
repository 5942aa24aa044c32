#id = affine_map<(d0) -> (d0)>
func.func @read_later(%x: memref<256xf32>, %out: memref<256xf32>, %out2: memref<256xf32>) {
  %grad = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.copy ins(%x : memref<256xf32>) outs(%grad : memref<256xf32>)
  %twice = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%grad : memref<256xf32>) outs(%twice : memref<256xf32>) {
  ^bb0(%g: f32, %o: f32):
    %r = arith.addf %g, %g : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%twice : memref<256xf32>) outs(%out : memref<256xf32>)
  linalg.copy ins(%grad : memref<256xf32>) outs(%out2 : memref<256xf32>)
  return
}
