// RUN: kcc-opt %s --split-input-file --kc-mark-in-place | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-mark-in-place=apply | FileCheck %s --check-prefix=APPLY

#id = affine_map<(d0) -> (d0)>

// An SGD update after buffer-results-to-out-params: result 0 (out-param
// %w_new, argument 3) updates argument 0. One elementwise op reads %w and
// writes %w_new at the same element, and nothing reads %w after it: proven.
// CHECK-LABEL: func.func @sgd(
// CHECK-SAME: kc.in_place = array<i64: 0, 0>
// With apply, the update writes %w itself.
// APPLY-LABEL: func.func @sgd(
// APPLY: linalg.generic {{.*}} ins(%arg0, %arg1 : memref<64xf32>, memref<64xf32>) outs(%arg0 : memref<64xf32>)
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

// -----

#id = affine_map<(d0) -> (d0)>
#rev = affine_map<(d0) -> (63 - d0)>

// The update reads %w reversed: element i is written before element 63 - i
// is read, so writing in place would read overwritten values. Not proven.
// CHECK-LABEL: func.func @reversed(
// CHECK-SAME: kc.in_place = array<i64>
func.func @reversed(%w: memref<64xf32>, %w_new: memref<64xf32>)
    attributes {kc.num_inputs = 1 : i64, kc.update_candidates = array<i64: 0, 0>} {
  linalg.generic {indexing_maps = [#rev, #id], iterator_types = ["parallel"]}
      ins(%w : memref<64xf32>) outs(%w_new : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// %w is read again after its update is written. Not proven.
// CHECK-LABEL: func.func @read_after(
// CHECK-SAME: kc.in_place = array<i64>
func.func @read_after(%w: memref<64xf32>, %copy: memref<64xf32>, %w_new: memref<64xf32>)
    attributes {kc.num_inputs = 2 : i64, kc.update_candidates = array<i64: 0, 0>} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%w : memref<64xf32>) outs(%w_new : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %a : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%w : memref<64xf32>) outs(%copy : memref<64xf32>)
  return
}
