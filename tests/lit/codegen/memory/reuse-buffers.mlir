// RUN: kcc-opt %s --split-input-file --kc-reuse-buffers | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// The relu mask reads %grad for the last time: it writes over it, and its
// own output allocation goes.
// CHECK-LABEL: func.func @last_use(
// CHECK: %[[GRAD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[GRAD]], %{{.*}} : memref<256xf32>, memref<256xf32>) outs(%[[GRAD]] : memref<256xf32>)
// CHECK: linalg.copy ins(%[[GRAD]] : memref<256xf32>)
func.func @last_use(%x: memref<256xf32>, %act: memref<256xf32>, %out: memref<256xf32>) {
  %grad = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.copy ins(%x : memref<256xf32>) outs(%grad : memref<256xf32>)
  %masked = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%grad, %act : memref<256xf32>, memref<256xf32>) outs(%masked : memref<256xf32>) {
  ^bb0(%g: f32, %a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %a, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%masked : memref<256xf32>) outs(%out : memref<256xf32>)
  return
}

// -----

#id = affine_map<(d0) -> (d0)>

// %grad is read again afterwards: the output keeps its own buffer.
// CHECK-LABEL: func.func @read_later(
// CHECK: memref.alloc
// CHECK: memref.alloc
func.func @read_later(%x: memref<256xf32>, %out: memref<256xf32>, %out2: memref<256xf32>) {
  %grad = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.copy ins(%x : memref<256xf32>) outs(%grad : memref<256xf32>)
  %twice = memref.alloc() {alignment = 64 : i64} : memref<256xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%grad : memref<256xf32>) outs(%twice : memref<256xf32>) {
  ^bb0(%g: f32, %o: f32):
    %r = arith.addf %g, %g : f32
    linalg.yield %r : f32
  }
  linalg.copy ins(%twice : memref<256xf32>) outs(%out : memref<256xf32>)
  linalg.copy ins(%grad : memref<256xf32>) outs(%out2 : memref<256xf32>)
  return
}
