// RUN: kcc-opt %s --kc-lower-loops=parallel-threshold=1000 | FileCheck %s

// Above the threshold an all-parallel nest gets a one-dimensional
// scf.parallel over its outermost dimension, with serial loops inside: the
// innermost loop stays contiguous instead of becoming one collapsed OpenMP
// loop that divides to recover its indices. The innermost dimension (32
// channels) runs as 16-lane vectors: the bias is one vector load, the
// pre-activation a vector add.
// CHECK-LABEL: func.func @bias_relu
// CHECK: scf.parallel (%[[N:.*]]) =
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c16
// CHECK: vector.load %{{.*}} : memref<8x26x26x32xf32>, vector<16xf32>
// CHECK: vector.load %{{.*}} : memref<32xf32>, vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: arith.maximumf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<8x26x26x32xf32>, vector<16xf32>
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

// An operand that does not depend on the innermost dimension is loaded once
// per row and broadcast; 24 lanes split as 8-lane vectors.
// CHECK-LABEL: func.func @scale_rows
// CHECK: scf.for %{{.*}} step %c8
// CHECK: %[[S:.*]] = memref.load %{{.*}} : memref<64xf32>
// CHECK: vector.broadcast %[[S]] : f32 to vector<8xf32>
// CHECK: arith.mulf %{{.*}} : vector<8xf32>
#mat = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @scale_rows(%x: memref<64x24xf32>, %s: memref<64xf32>,
                      %y: memref<64x24xf32>) {
  linalg.generic {indexing_maps = [#mat, #row, #mat],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<64x24xf32>, memref<64xf32>)
      outs(%y : memref<64x24xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  }
  return
}

// Ten lanes do not split into vectors: scalar loops, as linalg lowers them.
// CHECK-LABEL: func.func @ten_classes
// CHECK-NOT: vector.
// CHECK: memref.load
// CHECK: arith.negf %{{.*}} : f32
#cls = affine_map<(i, j) -> (i, j)>
func.func @ten_classes(%x: memref<8x10xf32>, %y: memref<8x10xf32>) {
  linalg.generic {indexing_maps = [#cls, #cls],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x10xf32>) outs(%y : memref<8x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  }
  return
}

// A reduction inside a parallel outer loop: each thread sums its own rows.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.parallel
#sum = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: memref<64x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#mat, #sum],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// A reduction over the outer loop stays serial (kc-split-reductions splits
// the big ones on tensors); its columns still run as vectors, the
// accumulator loaded and stored along them.
// CHECK-LABEL: func.func @column_sum
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: vector.load %{{.*}} : memref<64xf32>, vector<16xf32>
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}} : memref<64xf32>, vector<16xf32>
#col = affine_map<(i, j) -> (j)>
func.func @column_sum(%x: memref<64x64xf32>, %y: memref<64xf32>) {
  linalg.generic {indexing_maps = [#mat, #col],
                  iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  }
  return
}

// i1 buffers hold a byte per element: a mask read stays scalar.
// CHECK-LABEL: func.func @masked
// CHECK-NOT: vector.
// CHECK: arith.select
func.func @masked(%m: memref<8x16xi1>, %x: memref<8x16xf32>,
                  %y: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#mat, #mat, #mat],
                  iterator_types = ["parallel", "parallel"]}
      ins(%m, %x : memref<8x16xi1>, memref<8x16xf32>)
      outs(%y : memref<8x16xf32>) {
  ^bb0(%c: i1, %a: f32, %o: f32):
    %r = arith.select %c, %a, %zero : f32
    linalg.yield %r : f32
  }
  return
}
