// RUN: kcc-opt %s --split-input-file --kc-fuse-loops | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-fuse-loops=remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A softmax's max and the subtraction that reads it, with the max's
// initialization: three loop nests over the same 64 rows, every shared
// buffer accessed at row i by iteration i, become one loop (one kernel).
// REMARK: remark: fusion group (rows, serial): 3 loop nests in one kernel
// CHECK-LABEL: func.func @rows(
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NOT: linalg.
// CHECK: } {kc.fusion = {kind = "rows", layers = [], local_bytes = 256 : i64, ops = 3 : i64}}
// CHECK-NOT: linalg.
// CHECK: return
func.func @rows(%x: memref<64x10xf32>, %out: memref<64x10xf32>) {
  %lowest = arith.constant 0xFF800000 : f32
  %max = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
  linalg.fill ins(%lowest : f32) outs(%max : memref<64xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x10xf32>) outs(%max : memref<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : memref<64x10xf32>, memref<64xf32>) outs(%out : memref<64x10xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Independent elementwise updates of two parameters of different shapes (an
// optimizer step): one loop over 8192-element chunks of both, each chunk a
// slice of one flattened parameter.
// REMARK: remark: fusion group (horizontal, serial): 2 loop nests in one kernel
// CHECK-LABEL: func.func @horizontal(
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<300x40xf32> into memref<12000xf32>
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0, 1]] : memref<100x80xf32> into memref<8000xf32>
// CHECK: scf.for
// CHECK: scf.if
// CHECK: memref.subview %{{.*}} : memref<12000xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: scf.if
// CHECK: memref.subview %{{.*}} : memref<8000xf32> to memref<?xf32, strided<[1], offset: ?>>
// CHECK: } {kc.fusion = {kind = "horizontal"
// CHECK-NOT: linalg.
func.func @horizontal(%a: memref<300x40xf32>, %b: memref<100x80xf32>,
                      %oa: memref<300x40xf32>, %ob: memref<100x80xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<300x40xf32>) outs(%oa : memref<300x40xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.mulf %in, %in : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<100x80xf32>) outs(%ob : memref<100x80xf32>) {
  ^bb0(%in: f32, %o: f32):
    %d = arith.addf %in, %in : f32
    linalg.yield %d : f32
  }
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// A relu mask over 512x256 elements runs on all cores; the bias gradient
// after it reduces over the rows, which a parallel row loop cannot do. The
// cost rule keeps the mask parallel and leaves the reduction out, saying why.
// REMARK: remark: not fused with the loop nest before: it would make a loop that runs on all cores serial
// CHECK-LABEL: func.func @refused(
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @refused(%g: memref<512x256xf32>, %h: memref<512x256xf32>,
                   %dz: memref<512x256xf32>, %db: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %h : memref<512x256xf32>, memref<512x256xf32>) outs(%dz : memref<512x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %b, %zero : f32
    %r = arith.select %pos, %a, %zero : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]}
      ins(%dz : memref<512x256xf32>) outs(%db : memref<256xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  }
  return
}
