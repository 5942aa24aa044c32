//===- Passes.h - kc lowering, CPU codegen passes and pipelines -*- C++ -*-===//
//
// kc -> linalg -> LLVM dialect for the CPU. The JIT (engine/) and the
// driver both build the same named pipeline from here, so `kcc-opt
// --kc-cpu-pipeline` shows exactly what the JIT compiles.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_PASSES_H
#define KCC_CODEGEN_PASSES_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace kcc {

#define GEN_PASS_DECL
#include "codegen/Passes.h.inc"

/// Options of the CPU pipeline (kcc-opt: --kc-cpu-pipeline="...").
struct CpuPipelineOptions
    : public mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<bool> writableArgs{
      *this, "writable-args",
      llvm::cl::desc("let generated code write into argument buffers"),
      llvm::cl::init(false)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("fuse producer/consumer linalg.generic chains"),
      llvm::cl::init(true)};
  Option<bool> fuseEpilogues{
      *this, "fuse-epilogues",
      llvm::cl::desc("fuse bias and relu into GEMM and convolution calls "
                     "(kc-fuse-epilogues)"),
      llvm::cl::init(true)};
  Option<bool> splitReductions{
      *this, "split-reductions",
      llvm::cl::desc("split big sums over the batch into parallel partial "
                     "sums (kc-split-reductions)"),
      llvm::cl::init(true)};
  Option<bool> fuseLoops{
      *this, "fuse-loops",
      llvm::cl::desc("give runs of consecutive loop nests one loop "
                     "(kc-fuse-loops)"),
      llvm::cl::init(true)};
  Option<bool> outlineKernels{
      *this, "outline-kernels",
      llvm::cl::desc("give each loop-nest kernel a function of its own "
                     "(kc-outline-kernels)"),
      llvm::cl::init(true)};
  Option<unsigned> kernelsPerFunction{
      *this, "kernels-per-function",
      llvm::cl::desc("the most kernels (with dedupe-kernels: calls of "
                     "deduplicated kernels) one outlined function holds "
                     "(kc-outline-kernels)"),
      llvm::cl::init(8)};
  Option<bool> dedupeKernels{
      *this, "dedupe-kernels",
      llvm::cl::desc("outline one kernel per function with its buffers' "
                     "placements as arguments and compile identical ones "
                     "once (kc-dedupe-kernels); off: more functions cost "
                     "LLVM about as much as the duplicates saved"),
      llvm::cl::init(false)};
  Option<int64_t> coldWork{
      *this, "cold-work",
      llvm::cl::desc("operations executed per call (static trip counts "
                     "multiplied) below which an outlined kernel, or the "
                     "step's own function, gets unoptimized machine code "
                     "(kc-mark-cold-functions; 0: none)"),
      llvm::cl::init(1000000)};
  Option<bool> inPlaceUpdates{
      *this, "in-place-updates",
      llvm::cl::desc("write results proven safe in place into their "
                     "arguments (kc-mark-in-place apply)"),
      llvm::cl::init(false)};
  Option<bool> planMemory{
      *this, "plan-memory",
      llvm::cl::desc("place intermediate buffers in one static arena "
                     "(kc-plan-memory)"),
      llvm::cl::init(true)};
  Option<bool> arenaArg{
      *this, "arena-arg",
      llvm::cl::desc("take the arena as a trailing i8 buffer argument "
                     "instead of allocating it per call"),
      llvm::cl::init(false)};
  Option<bool> remarks{
      *this, "remarks",
      llvm::cl::desc("report fusions, refusals, the memory plan and the "
                     "kernel count as remarks (kcc --fusion-report)"),
      llvm::cl::init(false)};
  Option<int64_t> parallelThreshold{
      *this, "parallel-threshold",
      llvm::cl::desc("iteration points from which a generated loop nest runs "
                     "on an OpenMP team (0: all loops serial)"),
      llvm::cl::init(65536)};
};

/// kc -> linalg -> bufferized loops -> LLVM dialect. Every result becomes a
/// caller-provided buffer and the entry takes bare pointers:
/// `void f(T *arg0, ..., T *res0, ...)`.
void buildCpuPipeline(mlir::OpPassManager &pm, const CpuPipelineOptions &opts);

/// The first part of buildCpuPipeline only: kc -> linalg on tensors plus
/// fusion and cleanup (what `--emit=linalg` shows).
void buildLinalgPipeline(mlir::OpPassManager &pm,
                         const CpuPipelineOptions &opts);

/// One-shot bufferization of a linalg-on-tensors module (identity layouts at
/// function boundaries, copies as linalg.copy), then every result turned
/// into a caller-provided buffer: the step between buildLinalgPipeline and
/// the target's loops, shared by the CPU and CUDA pipelines.
void buildBufferizePipeline(mlir::OpPassManager &pm);

/// Adds what the pipeline needs beyond the dialects themselves (the
/// bufferization and deallocation interface models, the LLVM IR translations)
/// to `registry`; append it to a context before running kc-cpu-pipeline.
void registerCodegenInterfaces(mlir::DialectRegistry &registry);

/// Registers the codegen passes and the named pipelines kc-cpu-pipeline and
/// kc-linalg-pipeline (kcc-opt and kcc call it).
void registerCodegenPasses();

} // namespace kcc

#endif // KCC_CODEGEN_PASSES_H
