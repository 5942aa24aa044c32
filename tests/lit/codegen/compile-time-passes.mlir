// RUN: kcc-opt %s --split-input-file --kc-one-shot-bufferize | FileCheck %s --check-prefix=BUF
// RUN: kcc-opt %s --split-input-file --kc-buffer-deallocation | FileCheck %s --check-prefix=DEALLOC
// RUN: kcc-opt %s --split-input-file --kc-fold-descriptors | FileCheck %s --check-prefix=FOLD

// The passes kc-cpu-pipeline adds for its compile time (CpuPipeline.cpp).

// kc-one-shot-bufferize: with no call passing tensors, the boundaries are
// buffers first, as the module bufferization makes them. A writable
// argument is updated in place and returned as is; a read-only one
// (bufferization.writable = false) is copied before the write; the
// bufferization attributes are gone.
// BUF-LABEL: func.func @update(
// BUF-SAME: %[[P:.*]]: memref<4xf32> {kc.name = "p"}, %[[Q:.*]]: memref<4xf32> {kc.name = "q"})
// BUF-SAME: -> (memref<4xf32>, memref<4xf32>)
// BUF-NOT: bufferization.writable
// BUF: linalg.generic {{.*}} outs(%[[P]] : memref<4xf32>)
// BUF: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// BUF: linalg.copy ins(%[[Q]] : memref<4xf32>) outs(%[[COPY]] : memref<4xf32>)
// BUF: linalg.generic {{.*}} outs(%[[COPY]] : memref<4xf32>)
// BUF: return %[[P]], %[[COPY]] : memref<4xf32>, memref<4xf32>
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
// BUF-LABEL: func.func private @callee(%{{.*}}: memref<4xf32>) -> memref<4xf32>
// BUF-LABEL: func.func @caller(
// BUF: call @callee(%{{.*}}) : (memref<4xf32>) -> memref<4xf32>
func.func private @callee(%t: tensor<4xf32>) -> tensor<4xf32> {
  return %t : tensor<4xf32>
}
func.func @caller(%t: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @callee(%t) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// kc-buffer-deallocation: nothing allocated, nothing changes.
// DEALLOC-LABEL: func.func @arena_only(
// DEALLOC-NOT: dealloc
// DEALLOC: return
func.func @arena_only(%a: memref<64xi8>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.view %a[%c0][] : memref<64xi8> to memref<4xf32>
  memref.copy %v, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Top-level allocations of a straight-line function: each freed before the
// return, in allocation order, as the deallocation pipeline does.
// DEALLOC-LABEL: func.func @masks(
// DEALLOC: %[[M0:.*]] = memref.alloc() : memref<8xi1>
// DEALLOC: %[[M1:.*]] = memref.alloc() : memref<8xi1>
// DEALLOC: memref.dealloc %[[M0]] : memref<8xi1>
// DEALLOC-NEXT: memref.dealloc %[[M1]] : memref<8xi1>
// DEALLOC-NEXT: return
func.func @masks(%a: memref<8xi1>, %b: memref<8xi1>) {
  %m0 = memref.alloc() : memref<8xi1>
  memref.copy %a, %m0 : memref<8xi1> to memref<8xi1>
  %m1 = memref.alloc() : memref<8xi1>
  memref.copy %m0, %m1 : memref<8xi1> to memref<8xi1>
  memref.copy %m1, %b : memref<8xi1> to memref<8xi1>
  return
}

// -----

// An allocation inside a loop: the ownership-based pipeline.
// DEALLOC-LABEL: func.func @in_loop(
// DEALLOC: scf.for
// DEALLOC: memref.alloc
// DEALLOC: memref.dealloc
func.func @in_loop(%a: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    memref.copy %a, %t : memref<8xf32> to memref<8xf32>
    memref.copy %t, %a : memref<8xf32> to memref<8xf32>
  }
  return
}

// -----

// kc-fold-descriptors: reads of a memref descriptor built in place fold to
// the values inserted, and the chain dies.
// FOLD-LABEL: llvm.func @descriptor(
// FOLD-SAME: %[[PTR:.*]]: !llvm.ptr, %[[OFF:.*]]: i64)
// FOLD-NOT: llvm.insertvalue
// FOLD-NOT: llvm.extractvalue
// FOLD: %[[GEP:.*]] = llvm.getelementptr %[[PTR]][%[[OFF]]]
// FOLD: llvm.load %[[GEP]]
llvm.func @descriptor(%p: !llvm.ptr, %off: i64) -> f32 {
  %0 = llvm.mlir.undef : !llvm.struct<(ptr, ptr, i64)>
  %1 = llvm.insertvalue %p, %0[0] : !llvm.struct<(ptr, ptr, i64)>
  %2 = llvm.insertvalue %p, %1[1] : !llvm.struct<(ptr, ptr, i64)>
  %3 = llvm.insertvalue %off, %2[2] : !llvm.struct<(ptr, ptr, i64)>
  %4 = llvm.extractvalue %3[1] : !llvm.struct<(ptr, ptr, i64)>
  %5 = llvm.extractvalue %3[2] : !llvm.struct<(ptr, ptr, i64)>
  %6 = llvm.getelementptr %4[%5] : (!llvm.ptr, i64) -> !llvm.ptr, f32
  %7 = llvm.load %6 : !llvm.ptr -> f32
  llvm.return %7 : f32
}
