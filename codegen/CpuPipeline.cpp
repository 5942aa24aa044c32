//===- CpuPipeline.cpp - kc -> LLVM dialect for the CPU -------------------===//
//
// The named pipelines kc-linalg-pipeline and kc-cpu-pipeline. The order is
// the argument; each step says why it is where it is.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/StraightLineRewrite.h"

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
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/Iterators.h"
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

/// MLIR's buffer-deallocation pipeline (memref-expand-realloc, ownership-
/// based deallocation, its simplification and lowering, three canonicalizers
/// and a CSE) where it has work to do. With kc-plan-memory's arena as an
/// argument (every JIT compile) nothing is allocated any more, and the
/// pipeline cost 10% of kc-cpu-pipeline doing nothing; when what is left
/// are buffers allocated at the top of a straight-line function (the i1
/// masks kc-plan-memory does not place), none of them escaping (no memref is
/// returned, yielded or produced by a call), this pass frees each one right
/// before the return, in allocation order, as the pipeline would.
struct DeallocateIfAllocatedPass
    : public mlir::PassWrapper<DeallocateIfAllocatedPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DeallocateIfAllocatedPass)

  DeallocateIfAllocatedPass() {
    mlir::bufferization::BufferDeallocationPipelineOptions options;
    mlir::bufferization::buildBufferDeallocationPipeline(pipeline, options);
  }
  DeallocateIfAllocatedPass(const DeallocateIfAllocatedPass &other)
      : PassWrapper(other), pipeline(other.pipeline) {}

  llvm::StringRef getName() const override { return "KcBufferDeallocation"; }
  llvm::StringRef getArgument() const override {
    return "kc-buffer-deallocation";
  }
  llvm::StringRef getDescription() const override {
    return "The buffer-deallocation pipeline, when anything allocates";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    pipeline.getDependentDialects(registry);
  }

  /// An allocation at the top of a one-block function that ends in a return.
  static bool isTopLevel(mlir::memref::AllocOp alloc) {
    auto func = llvm::dyn_cast<mlir::func::FuncOp>(alloc->getParentOp());
    return func && func.getBody().hasOneBlock() &&
           llvm::isa<mlir::func::ReturnOp>(
               func.getBody().front().getTerminator());
  }

  void runOnOperation() override {
    using namespace mlir;
    auto isMemRef = llvm::IsaPred<BaseMemRefType>;
    // What the pipeline has to handle: an allocation other than a
    // top-level one, or a buffer whose ownership moves (a returned memref, a
    // memref result of a call, of a region op or of an op of unknown
    // effects). Nothing at all: nothing to do.
    SmallVector<memref::AllocOp> topLevel;
    bool complex = false;
    getOperation()->walk([&](Operation *op) {
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
        if (!effects.hasEffect<MemoryEffects::Allocate>())
          return WalkResult::advance();
        auto alloc = dyn_cast<memref::AllocOp>(op);
        if (alloc && isTopLevel(alloc)) {
          topLevel.push_back(alloc);
          return WalkResult::advance();
        }
        complex = true;
        return WalkResult::interrupt();
      }
      if (isa<func::ReturnOp>(op) ? llvm::any_of(op->getOperandTypes(), isMemRef)
                                  : llvm::any_of(op->getResultTypes(), isMemRef)) {
        complex = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (complex) {
      if (failed(runPipeline(pipeline, getOperation())))
        signalPassFailure();
      return;
    }
    if (topLevel.empty())
      return markAllAnalysesPreserved();
    for (memref::AllocOp alloc : topLevel) {
      OpBuilder b(alloc->getBlock()->getTerminator());
      b.create<memref::DeallocOp>(alloc.getLoc(), alloc.getResult());
    }
  }

  mlir::OpPassManager pipeline{mlir::ModuleOp::getOperationName()};
};

/// One-Shot Bufferize of the whole module, function boundaries included, as
/// MLIR's one-shot-bufferize{bufferize-function-boundaries} with identity
/// layouts at the boundaries, without its per-function analysis of which
/// result aliases which argument: that analysis compares every argument with
/// every result (0.85 s of a 400-layer step, whose thousands of parameters
/// and optimizer slots are both), and only call sites use it. Where no
/// call passes a tensor, the boundaries are bufferized first, as the module
/// bufferization would: each tensor argument a buffer of identity layout
/// read through bufferization.to_tensor (restrict: arguments never alias;
/// writable as its bufferization.writable says), each returned tensor
/// read through a read-only bufferization.to_memref; then the bodies are
/// bufferized as one op. Anything else (a call with tensors, a declaration
/// with a tensor signature) goes to the module bufferization.
struct KcOneShotBufferizePass
    : public mlir::PassWrapper<KcOneShotBufferizePass,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(KcOneShotBufferizePass)

  /// kc-cpu-pipeline's options (bufferizationOptions()).
  KcOneShotBufferizePass();
  explicit KcOneShotBufferizePass(
      mlir::bufferization::OneShotBufferizationOptions options)
      : options(std::move(options)) {
    assert(this->options.bufferizeFunctionBoundaries &&
           "the module bufferization is the fallback");
  }

  llvm::StringRef getName() const override { return "KcOneShotBufferize"; }
  llvm::StringRef getArgument() const override {
    return "kc-one-shot-bufferize";
  }
  llvm::StringRef getDescription() const override {
    return "One-Shot Bufferize with function boundaries, without the "
           "argument-result alias analysis";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    registry.insert<mlir::bufferization::BufferizationDialect,
                    mlir::memref::MemRefDialect>();
  }

  static bool isTensor(mlir::Type t) {
    return llvm::isa<mlir::TensorType>(t);
  }
  /// A tensor the boundary conversion takes: ranked, no encoding.
  static bool isPlainTensor(mlir::Type t) {
    auto ranked = llvm::dyn_cast<mlir::RankedTensorType>(t);
    return ranked && !ranked.getEncoding();
  }
  static mlir::MemRefType bufferOf(mlir::Type t) {
    auto ranked = llvm::cast<mlir::RankedTensorType>(t);
    return mlir::MemRefType::get(ranked.getShape(), ranked.getElementType());
  }

  /// Whether the boundaries can be bufferized ahead of the bodies.
  static bool boundariesAreSimple(mlir::ModuleOp module) {
    using namespace mlir;
    for (auto func : module.getOps<func::FuncOp>()) {
      FunctionType type = func.getFunctionType();
      if (func.isExternal()) {
        if (llvm::any_of(type.getInputs(), isTensor) ||
            llvm::any_of(type.getResults(), isTensor))
          return false;
        continue;
      }
      if (!llvm::all_of(type.getInputs(),
                        [](Type t) { return !isTensor(t) || isPlainTensor(t); }) ||
          !llvm::all_of(type.getResults(),
                        [](Type t) { return !isTensor(t) || isPlainTensor(t); }))
        return false;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (func.getArgAttr(i, "bufferization.buffer_layout"))
          return false;
    }
    WalkResult calls = module.walk([](CallOpInterface call) {
      Operation *op = call.getOperation();
      if (llvm::any_of(op->getOperandTypes(), isTensor) ||
          llvm::any_of(op->getResultTypes(), isTensor))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return !calls.wasInterrupted();
  }

  static void bufferizeBoundary(mlir::func::FuncOp func) {
    using namespace mlir;
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> inputs;
    for (BlockArgument arg : entry.getArguments()) {
      Type type = arg.getType();
      if (!isTensor(type)) {
        inputs.push_back(type);
        continue;
      }
      bool writable = true;
      if (auto attr = func.getArgAttrOfType<BoolAttr>(arg.getArgNumber(),
                                                      "bufferization.writable"))
        writable = attr.getValue();
      MemRefType buffer = bufferOf(type);
      arg.setType(buffer);
      auto tensor = b.create<bufferization::ToTensorOp>(
          arg.getLoc(), type, arg, /*restrict=*/true, writable);
      arg.replaceAllUsesExcept(tensor, tensor);
      inputs.push_back(buffer);
    }
    SmallVector<Type> results;
    for (Type type : func.getFunctionType().getResults())
      results.push_back(isTensor(type) ? bufferOf(type) : type);
    func.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      for (OpOperand &operand : ret->getOpOperands())
        if (isTensor(operand.get().getType()))
          operand.set(b.create<bufferization::ToMemrefOp>(
              ret.getLoc(), results[operand.getOperandNumber()], operand.get(),
              /*read_only=*/true));
    });
    func.setType(FunctionType::get(func.getContext(), inputs, results));
  }

  void runOnOperation() override {
    using namespace mlir;
    ModuleOp module = getOperation();
    if (!boundariesAreSimple(module)) {
      if (failed(bufferization::runOneShotModuleBufferize(module, options)))
        signalPassFailure();
      return;
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        bufferizeBoundary(func);
    bufferization::OneShotBufferizationOptions bodies = options;
    bodies.bufferizeFunctionBoundaries = false;
    if (failed(bufferization::runOneShotBufferize(module, bodies))) {
      signalPassFailure();
      return;
    }
    bufferization::removeBufferizationAttributesInModule(module);
  }

  mlir::bufferization::OneShotBufferizationOptions options;
};

/// The memref descriptors of the conversion to LLVM: each memref value is an
/// llvm.insertvalue chain of its pointers, offset, sizes and strides, read
/// back with llvm.extractvalue at every use. Folds each extract to the value
/// inserted (static shapes: nearly all of them) and erases what is then dead.
/// On the fixtures this halved the LLVM dialect (mobilenet: 27,000 to 12,000
/// lines), which LLVM IR translation and LLVM's InstCombine otherwise work
/// through; a canonicalizer does the same at ten times the cost.
struct FoldDescriptorsPass
    : public mlir::PassWrapper<FoldDescriptorsPass,
                               mlir::OperationPass<mlir::LLVM::LLVMFuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FoldDescriptorsPass)

  llvm::StringRef getName() const override { return "KcFoldDescriptors"; }
  llvm::StringRef getArgument() const override {
    return "kc-fold-descriptors";
  }
  llvm::StringRef getDescription() const override {
    return "Fold llvm.extractvalue of llvm.insertvalue chains, then erase "
           "dead ops";
  }

  void runOnOperation() override {
    using namespace mlir;
    getOperation().walk([](LLVM::ExtractValueOp op) {
      SmallVector<OpFoldResult, 1> folded;
      if (failed(op->fold(folded)) || folded.size() != 1)
        return;
      if (auto v = llvm::dyn_cast_if_present<Value>(folded.front()))
        if (v != op.getResult())
          op.getResult().replaceAllUsesWith(v);
    });
    // Users before producers: a chain dies in one sweep.
    getOperation().walk<WalkOrder::PostOrder, ReverseIterator>(
        [](Operation *op) {
          if (isOpTriviallyDead(op))
            op->erase();
        });
  }
};
} // namespace

void buildLinalgPipeline(mlir::OpPassManager &pm,
                         const CpuPipelineOptions &opts) {
  // CSE runs on kc ops only, never after lowering: a library call reads its
  // operands through bufferization.to_memref right before the call, and CSE
  // would merge a later call's to_memref into an earlier one, hiding the
  // later read from one-shot bufferization (which may then reuse the buffer
  // in place before that read happens).
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

namespace {
// Copies as linalg.copy: they become loops (kernels) like everything else,
// where a strided memref.copy would need the runner-utils library.
mlir::LogicalResult linalgCopy(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::Value from, mlir::Value to) {
  b.create<mlir::linalg::CopyOp>(loc, from, to);
  return mlir::success();
}

/// Whole-module bufferization with identity layouts at function boundaries,
/// so the entry's memrefs are plain contiguous arrays.
mlir::bufferization::OneShotBufferizationOptions bufferizationOptions() {
  mlir::bufferization::OneShotBufferizationOptions options;
  options.memCpyFn = linalgCopy;
  options.bufferizeFunctionBoundaries = true;
  options.setFunctionBoundaryTypeConversion(
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap);
  return options;
}

KcOneShotBufferizePass::KcOneShotBufferizePass()
    : KcOneShotBufferizePass(bufferizationOptions()) {}
} // namespace

void buildBufferizePipeline(mlir::OpPassManager &pm) {
  using namespace mlir;
  pm.addPass(std::make_unique<KcOneShotBufferizePass>(bufferizationOptions()));
  // Every result becomes a caller-provided buffer; results allocated inside
  // are written straight into the caller's buffer (hoisted), not copied.
  pm.addPass(createKcPrepareOutParams());
  bufferization::BufferResultsToOutParamsOpts outOpts;
  outOpts.memCpyFn = linalgCopy;
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
  pm.addPass(std::make_unique<DeallocateIfAllocatedPass>());
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
  if (opts.outlineKernels)
    pm.addPass(createKcOutlineKernels());
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
  pm.addNestedPass<LLVM::LLVMFuncOp>(std::make_unique<FoldDescriptorsPass>());
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
  // The pipeline's own passes without a tablegen definition, for kcc-opt.
  mlir::PassRegistration<KcOneShotBufferizePass>();
  mlir::PassRegistration<DeallocateIfAllocatedPass>();
  mlir::PassRegistration<FoldDescriptorsPass>();
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
