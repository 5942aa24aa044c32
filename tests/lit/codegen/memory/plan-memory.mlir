// RUN: kcc-opt %s --split-input-file --kc-plan-memory | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-plan-memory=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: kcc-opt %s --split-input-file --kc-plan-memory=arena-arg | FileCheck %s --check-prefix=ARG

// A chain of three 256-byte intermediates: %a and %c are never live at the
// same time, so they share offset 0 and the arena is the lower bound (512 B),
// not the unshared 768 B.
// REMARK: remark: arena 512 B for 3 buffers (lower bound 512 B, unshared 768 B, saved 256 B)
// CHECK-LABEL: func.func @chain(
// CHECK-SAME: kc.arena_bytes = 512 : i64
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[ARENA]][%[[C0]]][] : memref<512xi8> to memref<64xf32>
// CHECK: %[[C256:.*]] = arith.constant 256 : index
// CHECK: memref.view %[[ARENA]][%[[C256]]][] : memref<512xi8> to memref<64xf32>
// CHECK: %[[C0B:.*]] = arith.constant 0 : index
// CHECK: memref.view %[[ARENA]][%[[C0B]]][] : memref<512xi8> to memref<64xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return

// With arena-arg the caller provides the arena: no allocation at all.
// ARG-LABEL: func.func @chain(
// ARG-SAME: %{{.*}}: memref<512xi8> {kc.arena}
// ARG-NOT: memref.alloc
// ARG: return
func.func @chain(%x: memref<64xf32>, %out: memref<64xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  memref.dealloc %a : memref<64xf32>
  %c = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%b : memref<64xf32>) outs(%c : memref<64xf32>)
  linalg.copy ins(%c : memref<64xf32>) outs(%out : memref<64xf32>)
  return
}

// -----

// Greedy by size: the 1 KiB buffer is placed first; the two small ones are
// live during it, one after the other, and share the offset past it (sizes
// round up to 64 B). Liveness follows views (the collapse_shape keeps %big
// alive until the last copy).
// CHECK-LABEL: func.func @views(
// CHECK-SAME: kc.arena_bytes = 1088 : i64
// CHECK-SAME: kc.arena_lower_bound = 1088 : i64
// CHECK-SAME: kc.arena_sum = 1152 : i64
// CHECK: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK: memref.view %{{.*}}[%[[C1024]]][] : memref<1088xi8> to memref<8xf32>
// CHECK: %[[C1024B:.*]] = arith.constant 1024 : index
// CHECK: memref.view %{{.*}}[%[[C1024B]]][] : memref<1088xi8> to memref<8xf32>
func.func @views(%x: memref<16x16xf32>, %y: memref<8xf32>, %out: memref<256xf32>, %out2: memref<8xf32>) {
  %big = memref.alloc() {alignment = 64 : i64} : memref<16x16xf32>
  linalg.copy ins(%x : memref<16x16xf32>) outs(%big : memref<16x16xf32>)
  %flat = memref.collapse_shape %big [[0, 1]] : memref<16x16xf32> into memref<256xf32>
  %s = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.copy ins(%y : memref<8xf32>) outs(%s : memref<8xf32>)
  linalg.copy ins(%s : memref<8xf32>) outs(%out2 : memref<8xf32>)
  %t = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
  linalg.copy ins(%y : memref<8xf32>) outs(%t : memref<8xf32>)
  linalg.copy ins(%t : memref<8xf32>) outs(%out2 : memref<8xf32>)
  linalg.copy ins(%flat : memref<256xf32>) outs(%out : memref<256xf32>)
  return
}

// -----

// A buffer the function returns is not the function's to place.
// CHECK-LABEL: func.func @escapes(
// CHECK: %[[R:.*]] = memref.alloc() : memref<4xf32>
// CHECK: return %[[R]]
func.func @escapes(%x: memref<4xf32>) -> memref<4xf32> {
  %r = memref.alloc() : memref<4xf32>
  linalg.copy ins(%x : memref<4xf32>) outs(%r : memref<4xf32>)
  return %r : memref<4xf32>
}

// -----

// A library call's pointer to a planned buffer is the arena's pointer plus
// the offset (expand-strided-metadata would otherwise forward the extraction
// through the view to the arena and lose the offset).
// CHECK-LABEL: func.func @pointers(
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[OFF:.*]] = arith.constant 256 : index
// CHECK: arith.addi %[[BASE]], %[[OFF]] : index
func.func @pointers(%x: memref<64xf32>, %out: memref<64xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  %p = memref.extract_aligned_pointer_as_index %b : memref<64xf32> -> index
  %i = arith.index_cast %p : index to i64
  %q = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @use(%q) : (!llvm.ptr) -> ()
  linalg.copy ins(%b : memref<64xf32>) outs(%out : memref<64xf32>)
  return
}
func.func private @use(!llvm.ptr)

// -----

// The same through a subview and a reshape (the first part of a packed
// result, read by a library call): still the arena's pointer plus the
// offset, never the bare arena pointer.
// CHECK-LABEL: func.func @subview_pointers(
// CHECK: %[[ARENA:.*]] = memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// CHECK-NOT: memref.extract_aligned_pointer_as_index %{{.*}} : memref<{{.*}}xf32>
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[ARENA]]
// CHECK: %[[OFF:.*]] = arith.constant 256 : index
// CHECK: arith.addi %[[BASE]], %[[OFF]] : index
// CHECK-NOT: memref.extract_aligned_pointer_as_index %{{.*}} : memref<{{.*}}xf32>
func.func @subview_pointers(%x: memref<64xf32>, %out: memref<32xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.copy ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  linalg.copy ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  %s = memref.subview %b[0] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1]>>
  %r = memref.expand_shape %s [[0, 1]] output_shape [4, 8] : memref<32xf32, strided<[1]>> into memref<4x8xf32>
  %p = memref.extract_aligned_pointer_as_index %r : memref<4x8xf32> -> index
  %i = arith.index_cast %p : index to i64
  %q = llvm.inttoptr %i : i64 to !llvm.ptr
  func.call @use2(%q) : (!llvm.ptr) -> ()
  linalg.copy ins(%s : memref<32xf32, strided<[1]>>) outs(%out : memref<32xf32>)
  return
}
func.func private @use2(!llvm.ptr)
