//===- CudaPipeline.cpp - kc -> PTX: kc-cuda-pipeline ---------------------===//
//
// The named pipeline kc-cuda-pipeline and the entry points built on it
// (compileForCuda, emitPtx). The order is the argument; each step says why
// it is where it is.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/cuda/CudaPasses.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#ifndef KCC_CUDA_TOOLKIT_PATH
#define KCC_CUDA_TOOLKIT_PATH "/usr/local/cuda"
#endif

using namespace mlir;

namespace kcc {

namespace {
#define GEN_PASS_REGISTRATION
#include "codegen/cuda/Passes.h.inc"
} // namespace

void buildCudaPipeline(OpPassManager &pm, const CudaOptions &opts) {
  // Convolutions and pooling become generated kernels (no cuDNN); only the
  // GEMMs stay library calls, which the runtime hands to cuBLASLt.
  pm.addPass(createKcCudaLowerWindowOps());
  CpuPipelineOptions linalgOpts;
  linalgOpts.fuseElementwise = opts.fuseElementwise;
  // cuBLASLt epilogues are the CUDA backend's own (kcc_rt_matmul stays).
  linalgOpts.fuseEpilogues = false;
  // Reductions map onto thread blocks there; no OpenMP team to feed.
  linalgOpts.splitReductions = false;
  buildLinalgPipeline(pm, linalgOpts);

  // Bufferization as on the CPU: identity layouts at the boundary, copies as
  // linalg.copy (so they become kernels too), results as caller buffers.
  buildBufferizePipeline(pm);
  // Every intermediate lives in one device arena the runtime allocates once:
  // no cudaMalloc per step, and a CUDA graph can be captured over fixed
  // addresses. No deallocation pipeline: nothing is left to free.
  KcPlanMemoryOptions planOpts;
  planOpts.arenaArg = true;
  pm.addPass(createKcPlanMemory(planOpts));
  pm.addPass(createCanonicalizerPass());

  // Every linalg op becomes one parallel loop nest, then one kernel.
  pm.addNestedPass<func::FuncOp>(createKcCudaPrepareParallel());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  KcCudaTileParallelLoopsOptions tileOpts;
  tileOpts.blockSize = opts.blockSize;
  pm.addNestedPass<func::FuncOp>(createKcCudaTileParallelLoops(tileOpts));
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addPass(createParallelLoopToGpuPass());
  // The collapse/tile index math is affine.apply; lower it while it is still
  // in the launch bodies, so the kernels hold plain arith.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  // The canonicalizer hoisted the launch bodies' constants to the function;
  // sink them back so kernels see constant shapes (divisions by constants,
  // no extra parameters) before outlining fixes the kernel signatures.
  pm.addPass(createGpuLauchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  if (opts.stopAtOutlining)
    return;

  GpuNVVMAttachTargetOptions target;
  target.chip = opts.chip;
  target.features = opts.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertSCFToCFPass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  // Math becomes libdevice calls (__nv_expf, ...), linked at serialization.
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  if (opts.stopAtNVVM)
    return;

  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa"; // PTX text; the driver JITs it at load
  binary.toolkitPath = opts.toolkitPath.empty()
                           ? std::string(KCC_CUDA_TOOLKIT_PATH)
                           : std::string(opts.toolkitPath);
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void registerCudaCodegenInterfaces(DialectRegistry &registry) {
  registerCodegenInterfaces(registry);
  // ConvertToLLVM interfaces used by convert-gpu-to-nvvm, among others.
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void registerCudaCodegenPasses() {
  registerKcCudaPasses();
  PassPipelineRegistration<CudaOptions>(
      "kc-cuda-pipeline",
      "Lower kc to GPU kernels in PTX (gpu.binary) and a host function of "
      "launches and cuBLASLt GEMM calls over a static arena",
      buildCudaPipeline);
}

namespace {

/// Runs kc-cuda-pipeline on a clone of `module`, or of `func` alone.
FailureOr<OwningOpRef<ModuleOp>>
lowerClone(ModuleOp module, const CudaOptions &opts, func::FuncOp func = {}) {
  MLIRContext *ctx = module.getContext();
  DialectRegistry registry;
  registerCudaCodegenInterfaces(registry);
  ctx->appendDialectRegistry(registry);
  OwningOpRef<ModuleOp> clone;
  if (func) {
    // Only the entry: other functions (@forward next to @train_step) would
    // add kernels nobody launches.
    clone = ModuleOp::create(module.getLoc());
    OpBuilder b(ctx);
    b.setInsertionPointToEnd(clone->getBody());
    auto copy = cast<func::FuncOp>(b.clone(*func));
    copy.setPublic();
  } else {
    clone = module.clone();
  }
  PassManager pm(ctx);
  buildCudaPipeline(pm, opts);
  if (failed(pm.run(*clone)))
    return failure();
  return clone;
}

} // namespace

FailureOr<cuda::CudaProgram> compileForCuda(ModuleOp module, StringRef funcName,
                                            const CudaOptions &opts) {
  auto func = module.lookupSymbol<func::FuncOp>(funcName);
  if (!func)
    return module.emitError("no function @") << funcName << " to compile";
  FunctionType type = func.getFunctionType();
  if (!func.getBody().hasOneBlock() ||
      func.walk([](func::CallOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return func.emitOpError("the CUDA backend compiles one function without "
                            "calls");
  FailureOr<OwningOpRef<ModuleOp>> lowered = lowerClone(module, opts, func);
  if (failed(lowered))
    return failure();
  return extractCudaProgram(**lowered, funcName, type.getNumInputs(),
                            type.getNumResults());
}

LogicalResult emitPtx(ModuleOp module, const CudaOptions &opts,
                      llvm::raw_ostream &os) {
  FailureOr<OwningOpRef<ModuleOp>> lowered = lowerClone(module, opts);
  if (failed(lowered))
    return failure();
  for (auto binary : (*lowered)->getOps<gpu::BinaryOp>())
    for (Attribute a : binary.getObjects())
      if (auto object = dyn_cast<gpu::ObjectAttr>(a))
        os << "// kernel module " << binary.getSymName() << "\n"
           << object.getObject().getValue().rtrim('\0') << "\n";
  return success();
}

} // namespace kcc
