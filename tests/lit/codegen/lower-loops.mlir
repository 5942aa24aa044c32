// RUN: kcc-opt %s --kc-lower-loops=parallel-threshold=1000 | FileCheck %s

// Above the threshold an all-parallel nest gets a one-dimensional
// scf.parallel over its outermost dimension, with serial loops inside: the
// innermost loop stays contiguous (vectorizable) instead of becoming one
// collapsed OpenMP loop that divides to recover its indices.
// CHECK-LABEL: func.func @bias_relu
// CHECK: scf.parallel (%[[N:.*]]) =
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: arith.maximumf
#nhwc = affine_map<(n, h, w, c) -> (n, h, w, c)>
#chan = affine_map<(n, h, w, c) -> (c)>
func.func @bias_relu(%x: memref<8x26x26x32xf32>, %b: memref<32xf32>,
                     %y: memref<8x26x26x32xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#nhwc, #chan, #nhwc],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %b : memref<8x26x26x32xf32>, memref<32xf32>)
      outs(%y : memref<8x26x26x32xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// Below it, or with a reduction, the nest stays serial.
// CHECK-LABEL: func.func @row_sum
// CHECK-NOT: scf.parallel
// CHECK: scf.for
#mat = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: memref<64x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#mat, #row],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}
