// RUN: kcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kc-cuda-tile-parallel-loops))' | FileCheck %s
// RUN: kcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kc-cuda-tile-parallel-loops{block-size=64}))' | FileCheck %s --check-prefix=B64
// RUN: not kcc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(kc-cuda-tile-parallel-loops{block-size=0}))' 2>&1 | FileCheck %s --check-prefix=ERR

// ERR: block-size must be positive, got 0

// A rank-2 nest of 8 x 64 = 512 points: collapsed to one dimension of
// 8 * 64 points and tiled into blocks of 256 threads (two blocks), or of 64
// (eight); the tail is guarded.
// CHECK-LABEL: func.func @rank2
// CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %c8 : index
// CHECK: %[[N:.*]] = arith.muli %[[ROWS]], %c64 : index
// CHECK: %[[TILE:.*]] = arith.muli %{{.*}}, %c256 : index
// CHECK: scf.parallel (%[[B:.*]]) = (%{{.*}}) to (%[[N]]) step (%[[TILE]])
// CHECK-NEXT: scf.parallel (%[[T:.*]]) = (%{{.*}}) to (%[[TILE]])
// CHECK: arith.cmpi ult, %{{.*}}, %[[N]] : index
// CHECK: scf.if
// CHECK: memref.store
// B64-LABEL: func.func @rank2
// B64: %[[TILE:.*]] = arith.muli %{{.*}}, %c64_{{[0-9]+}} : index
// B64: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%[[TILE]])
// B64-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]])
func.func @rank2(%a: memref<8x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c64) step (%c1, %c1) {
    memref.store %one, %a[%i, %j] : memref<8x64xf32>
  }
  return
}

// -----

// A loop smaller than a block keeps one block of exactly its size, with no
// guard.
// CHECK-LABEL: func.func @small
// CHECK: %[[TILE:.*]] = arith.muli %{{.*}}, %c10{{.*}} : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c10) step (%[[TILE]])
// CHECK-NEXT: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[TILE]])
// CHECK-NOT: scf.if
func.func @small(%a: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c10) step (%c1) {
    memref.store %one, %a[%i] : memref<10xf32>
  }
  return
}
