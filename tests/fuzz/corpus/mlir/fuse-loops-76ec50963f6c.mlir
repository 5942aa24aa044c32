#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @horizontal(%a: memref<300x40xf32>, %b: memref<100x80xf32>,
                      %oa: memref<300x40xf32>, %ob: memref<100x80xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<300x40xf32>) outs(%oa : memref<300x40xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.mulf %in, %in : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<100x80xf32>) outs(%ob : memref<100x80xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  }
  return
}
