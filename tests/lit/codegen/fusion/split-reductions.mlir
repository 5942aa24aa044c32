// RUN: kcc-opt %s --kc-split-reductions=parallel-threshold=1000 | FileCheck %s

// A sum over N, H and W (BatchNormalization's mean): partial sums per n with
// n parallel, then the 8 partial rows added in order to the accumulator.
// CHECK-LABEL: func.func @channel_sum
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<8x16xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "reduction", "parallel"]
// CHECK-SAME: ins(%{{.*}} : tensor<8x14x14x16xf32>) outs(%[[ZERO]] : tensor<8x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK-SAME: ins(%[[P]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<16xf32>)
#x = affine_map<(n, h, w, c) -> (n, h, w, c)>
#c = affine_map<(n, h, w, c) -> (c)>
func.func @channel_sum(%x: tensor<8x14x14x16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#x, #c],
                       iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
      ins(%x : tensor<8x14x14x16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// Left alone: a sum over the outer loop only (each partial would be one
// point), a running maximum (not a sum), and an op below the threshold.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
#m = affine_map<(i, j) -> (i, j)>
#j = affine_map<(i, j) -> (j)>
#t = affine_map<(i, j, k) -> (i, j, k)>
#k = affine_map<(i, j, k) -> (k)>
func.func @left_alone(%x: tensor<512x16xf32>, %y: tensor<8x4x16xf32>,
                      %init: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) {
  %a = linalg.generic {indexing_maps = [#m, #j],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<512x16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %b = linalg.generic {indexing_maps = [#t, #k],
                       iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%y : tensor<8x4x16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %big = tensor.empty() : tensor<64x64x16xf32>
  %c = linalg.generic {indexing_maps = [#t, #k],
                       iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%big : tensor<64x64x16xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.maximumf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  return %a, %b, %c : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>
}
