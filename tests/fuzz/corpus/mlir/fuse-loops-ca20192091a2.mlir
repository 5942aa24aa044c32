#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @refused(%g: memref<512x256xf32>, %h: memref<512x256xf32>,
                   %dz: memref<512x256xf32>, %db: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %h : memref<512x256xf32>, memref<512x256xf32>) outs(%dz : memref<512x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %b, %zero : f32
    %r = arith.select %pos, %a, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<512x256xf32>) outs(%db : memref<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
