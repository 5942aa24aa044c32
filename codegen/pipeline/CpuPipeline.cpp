//===- CpuPipeline.cpp - kc -> LLVM dialect for the CPU -------------------===//
//
// The named pipelines kc-linalg-pipeline and kc-cpu-pipeline. The order is
// the argument; each step says why it is where it is.
//
// The pipeline phase (codegen/pipeline/). In: a verified kc module with its
// @train_step. Out: the LLVM dialect, one function per kernel, with a
// bare-pointer entry `void f(T *args..., T *results...)`. It runs the
// phases in order: lowering/ to linalg, fusion/ on tensors, memory/
// (bufferize, out-params, in-place, arena), fusion/ on loops, lowering/ to
// loops and LLVM; and holds what they share (the straight-line rewrite
// driver, the kernel count).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/memory/BufferizationOptions.h"
#include "codegen/pipeline/StraightLineRewrite.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

namespace kcc {

namespace {
#define GEN_PASS_REGISTRATION
#include "codegen/Passes.h.inc"
} // namespace

void buildLinalgPipeline(mlir::OpPassManager &pm,
                         const CpuPipelineOptions &opts) {
  // CSE runs on kc ops only, never after lowering: a library call reads its
  // operands through bufferization.to_memref right before the call, and CSE
  // would merge a later call's to_memref into an earlier one, hiding the
  // later read from one-shot bufferization (which may then reuse the buffer
  // in place before that read happens).
  // bfloat16 compute in float32 around the products, as kc casts that the
  // elementwise fusion below merges into the loops around them.
  pm.addPass(createKcWidenBF16());
  pm.addPass(mlir::createCSEPass());
  KcLowerToLinalgOptions lowerOpts;
  lowerOpts.writableArgs = opts.writableArgs;
  pm.addPass(createKcLowerToLinalg(lowerOpts));
  // On tensors, before bufferization: fusion is a use-def rewrite here, and
  // every fused producer is one buffer bufferization never allocates.
  if (opts.fuseElementwise) {
    KcFuseElementwiseOptions fuseOpts;
    fuseOpts.remarks = opts.remarks;
    pm.addPass(createKcFuseElementwise(fuseOpts));
  }
  // After elementwise fusion, so that each sum has its producers inside.
  if (opts.splitReductions) {
    KcSplitReductionsOptions splitOpts;
    splitOpts.parallelThreshold = opts.parallelThreshold;
    pm.addPass(createKcSplitReductions(splitOpts));
  }
  // After elementwise fusion, which leaves bias + activation as one generic
  // per layer.
  if (opts.fuseEpilogues) {
    KcFuseEpiloguesOptions epilogueOpts;
    epilogueOpts.remarks = opts.remarks;
    pm.addPass(createKcFuseEpilogues(epilogueOpts));
  }
  pm.addPass(createStraightLineCanonicalizer());
}

void buildBufferizePipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  pm.addPass(createKcOneShotBufferize());
  // Every result becomes a caller-provided buffer; results allocated inside
  // are written straight into the caller's buffer (hoisted), not copied.
  pm.addPass(createKcPrepareOutParams());
  bufferization::BufferResultsToOutParamsOpts outOpts;
  outOpts.memCpyFn = copyAsLinalg;
  outOpts.hoistStaticAllocs = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outOpts));
}

void buildCpuPipeline(mlir::OpPassManager &pm, const CpuPipelineOptions &opts) {
  using namespace mlir;
  buildLinalgPipeline(pm, opts);

  buildBufferizePipeline(pm);
  pm.addPass(createKcReuseBuffers());
  // Which updates may happen in place, proven while every kernel is still
  // one linalg op; kc-fuse-loops then treats such a pair as one buffer.
  KcMarkInPlaceOptions inPlaceOpts;
  inPlaceOpts.apply = opts.inPlaceUpdates;
  pm.addPass(createKcMarkInPlace(inPlaceOpts));
  // On buffers, before planning: the planner then keeps every buffer a
  // group touches live for the whole group.
  if (opts.fuseLoops) {
    KcFuseLoopsOptions fuseOpts;
    fuseOpts.parallelThreshold = opts.parallelThreshold;
    fuseOpts.remarks = opts.remarks;
    pm.addPass(createKcFuseLoops(fuseOpts));
  }
  // Once the out-params are the caller's, every remaining allocation is an
  // intermediate: one arena for all of them, before deallocation would free
  // them one by one.
  if (opts.planMemory) {
    KcPlanMemoryOptions planOpts;
    planOpts.arenaArg = opts.arenaArg;
    planOpts.remarks = opts.remarks;
    pm.addPass(createKcPlanMemory(planOpts));
  }
  // Frees every intermediate buffer once per call (before any loop lowering,
  // while the IR is still structured); nothing to do when everything lives
  // in the arena.
  pm.addPass(createKcBufferDeallocation());
  // Bufferization and the memory plan leave many identical views and
  // constants: what LLVM would otherwise see once per use (the deallocation
  // pipeline ends with this CSE too; without it the steps compiled 10%
  // slower).
  pm.addPass(createCSEPass());
  pm.addPass(createStraightLineCanonicalizer());

  // Last point where each kernel is one op: count them.
  KcCountKernelsOptions countOpts;
  countOpts.remarks = opts.remarks;
  pm.addPass(createKcCountKernels(countOpts));
  // Loops: big nests parallel over an OpenMP team, the rest serial; LLVM's
  // loop vectorizer handles the inner loops at -O3; GEMM and convolution
  // threads come from oneDNN.
  KcLowerLoopsOptions loopOpts;
  loopOpts.parallelThreshold = opts.parallelThreshold;
  pm.addPass(createKcLowerLoops(loopOpts));
  // One function per kernel before LLVM sees them (compile time linear in
  // the number of kernels).
  if (opts.outlineKernels) {
    KcOutlineKernelsOptions outlineOpts;
    outlineOpts.kernelsPerFunction = opts.kernelsPerFunction;
    if (opts.dedupeKernels) {
      // One function per kernel, where buffers are arguments: the repeated
      // blocks of a network give identical kernels, compiled once. The
      // calls to them then go into runs of their own, as kernels did, so
      // that no function holds thousands of straight-line calls. With
      // every kernel a function of its own, LLVM's cost per function ate
      // the savings; with a kernel called once put back, `kcc --emit=obj`
      // took 12-29% less CPU time on ResNet50/101, MobileNetV2, DenseNet121
      // and NASNetMobile. Off by default until the whole test suite has
      // run with it on.
      KcOutlineKernelsOptions oneEach;
      oneEach.kernelsPerFunction = 1;
      oneEach.passPlacements = true;
      pm.addPass(createKcOutlineKernels(oneEach));
      pm.addPass(createKcDedupeKernels());
    }
    pm.addPass(createKcOutlineKernels(outlineOpts));
    // Kernels that do little per call, and the step's own straight-line
    // calls, get unoptimized machine code: NASNetMobile's and ResNet50's
    // compile at batch 2 took 26-28% less CPU time, their steps no slower
    // within the measurement's noise.
    if (opts.coldWork > 0) {
      KcMarkColdFunctionsOptions coldOpts;
      coldOpts.work = opts.coldWork;
      pm.addNestedPass<func::FuncOp>(createKcMarkColdFunctions(coldOpts));
    }
  }
  // From here on, every pass that can works on one function at a time
  // (nested under func.func, later llvm.func): the pass manager runs them on
  // the outlined kernels in parallel, and each one's cost is bounded by a
  // function's size. The module-level ones are those that declare symbols
  // (libm functions, malloc, OpenMP's runtime) or change function types.
  if (opts.parallelThreshold > 0) {
    pm.addPass(createConvertSCFToOpenMPPass());
    // The pass wraps each parallel body in memref.alloca_scope; with serial
    // loops inside, convert-scf-to-cf would split that single-block region.
    // Canonicalization inlines the scopes, which hold no allocas here.
    pm.addNestedPass<func::FuncOp>(createStraightLineCanonicalizer());
  }
  {
    OpPassManager &perFunc = pm.nest<func::FuncOp>();
    perFunc.addPass(createLowerAffinePass());
    perFunc.addPass(createConvertSCFToCFPass());
    // Subviews (slices, reshapes) become plain pointer arithmetic.
    perFunc.addPass(memref::createExpandStridedMetadataPass());
    perFunc.addPass(createLowerAffinePass());
    // f32 tanh as the kernel library computes it (kc-fuse-epilogues, which
    // matches math.tanh, has run).
    perFunc.addPass(createKcExpandMath());
    // The bf16 casts as integer ops: no target feature or libcall needed.
    perFunc.addPass(createKcExpandBF16());
    // LLVM intrinsics where they exist (exp, log, sqrt, pow, fma, ...), libm
    // calls for the rest (erf, f64 tanh), resolved from the process by the
    // JIT; a libm call on a vector becomes one call per lane.
    perFunc.addPass(createConvertMathToLLVMPass());
  }
  pm.addPass(createConvertMathToLibmPass());
  // The innermost dims kc-lower-loops emitted as vectors (VectorLoops.cpp),
  // and the lane extracts of the libm calls.
  pm.addNestedPass<func::FuncOp>(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addNestedPass<func::FuncOp>(createArithToLLVMConversionPass());
  pm.addNestedPass<func::FuncOp>(createConvertIndexToLLVMPass());
  // Bare pointers: the entry is `void f(T *args..., T *results...)`.
  ConvertFuncToLLVMPassOptions funcOpts;
  funcOpts.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcOpts));
  // The omp regions' types. After func-to-llvm: this pass also converts
  // functions, with the default (descriptor) calling convention.
  if (opts.parallelThreshold > 0)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addNestedPass<LLVM::LLVMFuncOp>(createReconcileUnrealizedCastsPass());
  pm.addNestedPass<LLVM::LLVMFuncOp>(createKcFoldDescriptors());
}

void registerCodegenInterfaces(mlir::DialectRegistry &registry) {
  using namespace mlir;
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerOpenMPDialectTranslation(registry);
}

void registerCodegenPasses() {
  registerKcCodegenPasses();
  mlir::PassPipelineRegistration<CpuPipelineOptions>(
      "kc-linalg-pipeline",
      "Lower kc to linalg on tensors, fuse elementwise chains, clean up",
      buildLinalgPipeline);
  mlir::PassPipelineRegistration<CpuPipelineOptions>(
      "kc-cpu-pipeline",
      "Lower kc to the LLVM dialect for the host CPU (bare-pointer entry, "
      "caller-provided result buffers)",
      buildCpuPipeline);
}

} // namespace kcc
