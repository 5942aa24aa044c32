// RUN: kcc-opt %s --kc-plan-memory=arena-arg | FileCheck %s
// RUN: kcc-opt %s --kc-plan-memory=arena-arg --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// An arena past 4 GiB (3 GiB and 64 B live at once): offsets and sizes stay
// 64-bit from the plan to the pointer arithmetic, none wraps at 2^31 or 2^32.
// CHECK-LABEL: func.func @past_4gib(
// CHECK-SAME: %[[ARENA:[^ ]*]]: memref<3221225536xi8> {kc.arena}
// CHECK-SAME: kc.arena_bytes = 3221225536 : i64
// CHECK: %[[OFF:.*]] = arith.constant 3221225472 : index
// CHECK: memref.view %[[ARENA]][%[[OFF]]][] : memref<3221225536xi8> to memref<16xf32>
// LLVM-LABEL: llvm.func @past_4gib(
// LLVM: %[[OFF:.*]] = llvm.mlir.constant(3221225472 : index) : i64
// LLVM: llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr, i64) -> !llvm.ptr, i8
func.func @past_4gib(%x: memref<805306368xf32>, %y: memref<16xf32>,
                     %out: memref<805306368xf32>, %out2: memref<16xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<805306368xf32>
  memref.copy %x, %a : memref<805306368xf32> to memref<805306368xf32>
  %s = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  memref.copy %y, %s : memref<16xf32> to memref<16xf32>
  memref.copy %a, %out : memref<805306368xf32> to memref<805306368xf32>
  memref.copy %s, %out2 : memref<16xf32> to memref<16xf32>
  return
}
