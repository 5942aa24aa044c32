// RUN: kcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kc-cuda-prepare-parallel))' | FileCheck %s

// A sum over the batch (dimension 0, a reduction) of a [8, 16] gradient:
// interchanged so that the parallel dimension comes first and becomes the
// kernel's grid, not a host loop around launches.
// CHECK-LABEL: func.func @bias_grad
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
func.func @bias_grad(%g: memref<8x16xf32>, %db: memref<16xf32>) {
  linalg.generic {indexing_maps = [#in, #out],
                  iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<8x16xf32>) outs(%db : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A reduction to a scalar (a loss) has no parallel dimension: it is wrapped
// in a one-iteration scf.parallel, a one-thread kernel.
// CHECK-LABEL: func.func @to_scalar
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: scf.parallel (%{{.*}}) = (%[[C0]]) to (%[[C1]]) step (%[[C1]])
// CHECK-NEXT: linalg.generic
// CHECK-SAME: iterator_types = ["reduction"]
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
func.func @to_scalar(%x: memref<32xf32>, %loss: memref<f32>) {
  linalg.generic {indexing_maps = [#v, #s], iterator_types = ["reduction"]}
      ins(%x : memref<32xf32>) outs(%loss : memref<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
