#id = affine_map<(d0) -> (d0)>
func.func @last_use(%x: memref<256xf32>, %act: memref<256xf32>, %out: memref<256xf32>) {
  %grad = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.copy ins(%x : memref<256xf32>) outs(%grad : memref<256xf32>)
  %masked = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%grad, %act : memref<256xf32>, memref<256xf32>) outs(%masked : memref<256xf32>) {
  ^bb0(%g: f32, %a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%masked : memref<256xf32>) outs(%out : memref<256xf32>)
  return
}
