#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (63 - d0)>
func.func @reversed(%w: memref<64xf32>, %w_new: memref<64xf32>)
    attributes {kc.num_inputs = 1 : i64, kc.update_candidates = array<i64: 0, 0>} {
  linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel"]}
      ins(%w : memref<64xf32>) outs(%w_new : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
