// RUN: kcc-opt %s --split-input-file --kc-one-shot-bufferize | FileCheck %s

// kc-one-shot-bufferize: with no call passing tensors, the boundaries are
// buffers first, as the module bufferization makes them. A writable
// argument is updated in place and returned as is; a read-only one
// (bufferization.writable = false) is copied before the write; the
// bufferization attributes are gone.
// CHECK-LABEL: func.func @update(
// CHECK-SAME: %[[P:.*]]: memref<4xf32> {kc.name = "p"}, %[[Q:.*]]: memref<4xf32> {kc.name = "q"})
// CHECK-SAME: -> (memref<4xf32>, memref<4xf32>)
// CHECK-NOT: bufferization.writable
// CHECK: linalg.generic {{.*}} outs(%[[P]] : memref<4xf32>)
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: linalg.copy ins(%[[Q]] : memref<4xf32>) outs(%[[COPY]] : memref<4xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[COPY]] : memref<4xf32>)
// CHECK: return %[[P]], %[[COPY]] : memref<4xf32>, memref<4xf32>
#map = affine_map<(d0) -> (d0)>
func.func @update(%p: tensor<4xf32> {kc.name = "p"},
                  %q: tensor<4xf32> {bufferization.writable = false, kc.name = "q"})
    -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]}
      outs(%p : tensor<4xf32>) {
  ^bb0(%x: f32):
    %y = arith.addf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]}
      outs(%q : tensor<4xf32>) {
  ^bb0(%x: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// A call that passes a tensor: the module bufferization, calls included.
// CHECK-LABEL: func.func private @callee(%{{.*}}: memref<4xf32>) -> memref<4xf32>
// CHECK-LABEL: func.func @caller(
// CHECK: call @callee(%{{.*}}) : (memref<4xf32>) -> memref<4xf32>
func.func private @callee(%t: tensor<4xf32>) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}
func.func @caller(%t: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @callee(%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
