//===- CudaPasses.h - kc -> PTX pipeline and compiler entry -*- C++ -*-===//
//
// kc-cuda-pipeline: kc -> linalg (GEMMs stay kcc_rt_matmul calls, run by
// cuBLASLt) -> one-shot bufferize -> static arena -> parallel loops -> gpu
// kernels -> NVVM -> PTX (gpu-module-to-binary{format=isa}). The host
// function that remains (launches, GEMM calls, arena views) is read back into
// a CudaProgram by compileForCuda.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_CUDA_CUDAPASSES_H
#define KCC_CODEGEN_CUDA_CUDAPASSES_H

#include "codegen/cuda/CudaProgram.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/Support/raw_ostream.h"

namespace kcc {

#define GEN_PASS_DECL
#include "codegen/cuda/Passes.h.inc"

/// Options of kc-cuda-pipeline (kcc-opt: --kc-cuda-pipeline="chip=sm_90").
struct CudaOptions : public mlir::PassPipelineOptions<CudaOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("target SM"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX ISA version feature"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> toolkitPath{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root (for libdevice); empty: the one "
                     "kcc was built with"),
      llvm::cl::init("")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("threads per block"),
                            llvm::cl::init(256)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("fuse producer/consumer linalg.generic chains"),
      llvm::cl::init(true)};
  /// Stop after kernel outlining (gpu.module with gpu/arith ops, before
  /// NVVM): what lit tests and --emit=gpu show.
  Option<bool> stopAtOutlining{*this, "stop-at-outlining",
                               llvm::cl::desc("stop before NVVM lowering"),
                               llvm::cl::init(false)};
  /// Stop after NVVM lowering, before serialization to PTX.
  Option<bool> stopAtNVVM{*this, "stop-at-nvvm",
                          llvm::cl::desc("stop before gpu-module-to-binary"),
                          llvm::cl::init(false)};
};

/// Appends kc-cuda-pipeline to `pm` (a module pass manager).
void buildCudaPipeline(mlir::OpPassManager &pm, const CudaOptions &opts);

/// What kc-cuda-pipeline needs beyond the dialects (bufferization models,
/// the NVVM target and LLVM IR translations).
void registerCudaCodegenInterfaces(mlir::DialectRegistry &registry);

/// Registers the kc-cuda-* passes and the kc-cuda-pipeline pipeline.
void registerCudaCodegenPasses();

/// Lowers a clone of `module` with kc-cuda-pipeline and reads `funcName`'s
/// host side back into a CudaProgram. Errors are emitted as diagnostics on
/// the module's context; returns failure after them.
mlir::FailureOr<cuda::CudaProgram> compileForCuda(mlir::ModuleOp module,
                                                  llvm::StringRef funcName,
                                                  const CudaOptions &opts);

/// The PTX of every kernel module of `module` (kc, or anything
/// kc-cuda-pipeline accepts), each preceded by a `// kernel module NAME`
/// line: the driver's `--target=cuda --emit=ptx`.
mlir::LogicalResult emitPtx(mlir::ModuleOp module, const CudaOptions &opts,
                            llvm::raw_ostream &os);

/// Reads a lowered module (after kc-cuda-pipeline) into a CudaProgram.
/// `numInputs`/`numResults`: the entry's signature before lowering.
mlir::FailureOr<cuda::CudaProgram> extractCudaProgram(mlir::ModuleOp lowered,
                                                      llvm::StringRef funcName,
                                                      unsigned numInputs,
                                                      unsigned numResults);

} // namespace kcc

#endif // KCC_CODEGEN_CUDA_CUDAPASSES_H
