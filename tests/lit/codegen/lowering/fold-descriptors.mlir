// RUN: kcc-opt %s --split-input-file --kc-fold-descriptors | FileCheck %s

// kc-fold-descriptors: reads of a memref descriptor built in place fold to
// the values inserted, and the chain dies.
// CHECK-LABEL: llvm.func @descriptor(
// CHECK-SAME: %[[PTR:.*]]: !llvm.ptr, %[[OFF:.*]]: i64)
// CHECK-NOT: llvm.insertvalue
// CHECK-NOT: llvm.extractvalue
// CHECK: %[[GEP:.*]] = llvm.getelementptr %[[PTR]][%[[OFF]]]
// CHECK: llvm.load %[[GEP]]
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
