//===- Passes.td - kc lowering and CPU codegen passes -*- tablegen -*-===//
//
// Passes that take kc out of its own dialect. Every pass has a kc- prefix;
// no `constructor`, so tablegen generates createXPass() and its options.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_PASSES_TD
#define KCC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def KcLowerToLinalg : Pass<"kc-lower-to-linalg", "mlir::ModuleOp"> {
  let summary = "Lowers kc ops to linalg on tensors, GEMM/conv/pooling to "
                "library calls";
  let description = [{
    Rewrites every kc op into ops that one-shot bufferization understands:

    - elementwise, compare, select, cast, broadcast_to, random_uniform,
      one_hot, argmax, reductions and softmax become `linalg.generic` with
      `arith`/`math` bodies (so linalg's elementwise fusion can merge chains);
    - reshape, transpose, concat and slice become `tensor` reshapes,
      `linalg.transpose`, `tensor.insert_slice` and `tensor.extract_slice`;
    - matmul, conv2d (+ both backprops) and pooling (+ grads) become calls to
      the `kcc_rt_*` C entry points of runtime/jit/LibraryCalls.cpp, which
      run the kernel library (oneDNN):

    ```mlir
    %a = bufferization.to_memref %lhs : memref<32x784xf32>
    %out = memref.alloc() {alignment = 64 : i64} : memref<32x128xf32>
    func.call @kcc_rt_matmul_f32(%pa, %pb, %pout, %m, %n, %k, %ta, %tb) : ...
    %y = bufferization.to_tensor %out restrict writable : memref<32x128xf32>
    ```

    Library calls take bare pointers (`!llvm.ptr`) and i64 sizes, so their
    C signatures stay plain whatever calling convention the entry uses.

    The function arguments are marked `bufferization.writable = false`
    unless `writable-args` is set: a caller's arrays are inputs, and
    one-shot bufferization must not update them in place.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::tensor::TensorDialect"];
  let options = [
    Option<"writableArgs", "writable-args", "bool", /*default=*/"false",
           "let bufferization write into the function's argument buffers">,
  ];
  let statistics = [
    Statistic<"numLibraryCalls", "library-calls",
              "kc ops lowered to kcc_rt_* library calls">,
  ];
}

def KcPrepareOutParams : Pass<"kc-prepare-out-params", "mlir::ModuleOp"> {
  let summary = "Gives every returned buffer its own allocation before "
                "buffer-results-to-out-params";
  let description = [{
    After bufferization a function may return one of its arguments, or one
    buffer twice. buffer-results-to-out-params (with hoisted allocations)
    writes each result straight into the caller's buffer only when the
    result is an allocation of its own, and MLIR 19 crashes on a returned
    block argument. This pass copies such results into fresh allocations,
    which the hoisting then turns into the out-params themselves: one copy,
    never two.

    ```mlir
    return %arg0 : memref<4xf32>
    // becomes
    %0 = memref.alloc() : memref<4xf32>
    linalg.copy ins(%arg0 : memref<4xf32>) outs(%0 : memref<4xf32>)
    return %0 : memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // KCC_CODEGEN_PASSES_TD
