#id = affine_map<(d0) -> (d0)>
func.func @sgd(%w: memref<64xf32>, %g: memref<64xf32>, %lr: memref<f32>,
               %w_new: memref<64xf32>)
    attributes {kc.num_inputs = 3 : i64, kc.update_candidates = array<i64: 0, 0>} {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : memref<64xf32>, memref<64xf32>) outs(%w_new : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.subf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}
