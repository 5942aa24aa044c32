//===- Passes.td - CUDA codegen passes -------------------*- tablegen -*-===//
//
// The kc-specific steps of kc-cuda-pipeline; everything else in it is
// upstream MLIR (parallel loops -> gpu -> NVVM -> PTX).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_CUDA_PASSES_TD
#define KCC_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def KcCudaLowerWindowOps : Pass<"kc-cuda-lower-window-ops", "mlir::ModuleOp"> {
  let summary = "Lowers kc convolutions and pooling (and their gradients) to "
                "linalg.generic for generated GPU kernels";
  let description = [{
    On the CPU these ops are oneDNN library calls; on the GPU kcc generates
    them (no cuDNN). Runs before kc-lower-to-linalg, which then leaves only
    matmul as a library call (cuBLASLt).

    - conv2d and conv2d_backprop_filter: a `tensor.pad` of the input (zeros,
      the TF `same` rule with the odd row after) and one `linalg.generic`
      with affine maps;
    - max_pool2d: `tensor.pad` with -inf and a running-max generic;
    - conv2d_backprop_input, avg_pool2d (divisor = the real elements of the
      window), max_pool2d_grad and avg_pool2d_grad: gather-form generics
      (each output element reads the windows that touch it through
      `tensor.extract` with bounds checks), so no kernel needs atomics and
      the summation order is the kernel library's.

    ```mlir
    %y = kc.conv2d %x, %w : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x26x26x32xf32>
    // becomes
    %y = linalg.generic {iterator_types = ["parallel", "parallel", "parallel",
           "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w ...) ...
    ```
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect"];
}

def KcCudaPrepareParallel : Pass<"kc-cuda-prepare-parallel", "mlir::func::FuncOp"> {
  let summary = "Puts parallel dimensions first and gives reductions to a "
                "scalar a one-iteration parallel loop";
  let description = [{
    convert-linalg-to-parallel-loops turns only a leading run of parallel
    dimensions into `scf.parallel`; a reduction dimension before them (the
    bias gradient sums over the batch, dimension 0) would leave a host loop
    around a kernel launch. This pass interchanges every `linalg.generic` so
    its parallel dimensions come first, and wraps structured ops with no
    parallel dimension (a loss reduced to a scalar) in a one-iteration
    `scf.parallel`, so every loop nest becomes a kernel and no loop is left
    on the host.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def KcCudaTileParallelLoops : Pass<"kc-cuda-tile-parallel-loops", "mlir::func::FuncOp"> {
  let summary = "Collapses each outermost scf.parallel to one dimension and "
                "tiles it into blocks of threads";
  let description = [{
    gpu-map-parallel-loops maps an outer parallel loop to the grid and a
    nested one to the threads of a block. A lone loop nest would be mapped to
    one-thread blocks, and a rank-4 one would leave its last dimension
    sequential, so each outermost loop is first collapsed to one dimension
    and tiled by `block-size` (a guarded inner loop of constant trip count):
    `ceil(N / block-size)` blocks of `block-size` threads.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::affine::AffineDialect"];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block">,
  ];
}

#endif // KCC_CODEGEN_CUDA_PASSES_TD
