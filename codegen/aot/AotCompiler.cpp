//===- AotCompiler.cpp - LLVM dialect to object code, ahead of time -------===//
//
// The steps the JIT (engine/CompiledFunction.cpp) takes too, before it
// links the object with ORC: mlir::translateModuleToLLVMIR, kcc's
// kernel pipeline on LLVM's new pass manager (kernelPipeline()), then the
// legacy codegen pass manager, which is what TargetMachine still requires
// for addPassesToEmitFile in LLVM 19.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/AotCompiler.h"

#include "codegen/aot/SplitModule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

using namespace kcc;

namespace {
llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::CodeGenOptLevel codeGenLevel(unsigned optLevel) {
  switch (optLevel) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}
} // namespace

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
aot::createTargetMachine(const TargetOptions &options) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return makeError("no target for " + triple + ": " + error);

  bool host = options.cpu.empty() || options.cpu == "native";
  std::string cpu = host ? llvm::sys::getHostCPUName().str() : options.cpu;
  llvm::SubtargetFeatures features;
  // The host CPU name alone can miss features (e.g. AVX disabled by the OS),
  // so the host's detected features come with it, as in clang -march=native.
  if (host)
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.getKey(), feature.getValue());
  llvm::SubtargetFeatures requested(options.features);
  for (const std::string &f : requested.getFeatures())
    features.AddFeature(f);

  // LLVM only warns about an unknown CPU and ignores it; kcc refuses it.
  if (!host) {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!sti || !sti->isCPUStringValid(cpu))
      return makeError("unknown CPU '" + cpu + "' for " + triple +
                       " (see --mcpu=help)");
  }

  // PIC always: Debian links executables as PIE, and a shared library needs
  // it anyway, so one object serves both.
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, cpu, features.getString(), llvm::TargetOptions(),
      llvm::Reloc::PIC_, std::nullopt, codeGenLevel(options.optLevel)));
  if (!tm)
    return makeError("cannot create a target machine for " + triple);
  return tm;
}

namespace {
/// kc.name & co. on arguments and results mean nothing to LLVM (the
/// translation warns about each); the C header carries them instead.
void stripNonLLVMAttributes(mlir::ModuleOp module) {
  module.walk([](mlir::LLVM::LLVMFuncOp f) {
    auto strip = [](mlir::DictionaryAttr attrs) {
      llvm::SmallVector<mlir::NamedAttribute> kept;
      for (mlir::NamedAttribute a : attrs)
        if (a.getName().getValue().starts_with("llvm."))
          kept.push_back(a);
      return mlir::DictionaryAttr::get(attrs.getContext(), kept);
    };
    // All at once: setting them one by one rebuilds the array each time
    // (quadratic in the arguments: 0.2 s of a 400-layer step's thousands).
    if (mlir::ArrayAttr args = f.getArgAttrsAttr()) {
      llvm::SmallVector<mlir::Attribute> kept;
      bool any = false;
      for (mlir::Attribute d : args) {
        auto dict = strip(llvm::cast<mlir::DictionaryAttr>(d));
        any |= !dict.empty();
        kept.push_back(dict);
      }
      if (any)
        f.setArgAttrsAttr(mlir::ArrayAttr::get(f.getContext(), kept));
      else
        f.removeArgAttrsAttr();
    }
    if (mlir::ArrayAttr results = f.getResAttrsAttr()) {
      llvm::SmallVector<mlir::Attribute> kept;
      for (mlir::Attribute d : results)
        kept.push_back(strip(llvm::cast<mlir::DictionaryAttr>(d)));
      f.setResAttrsAttr(mlir::ArrayAttr::get(f.getContext(), kept));
    }
  });
}

/// translateToLLVMIR of a module the caller no longer needs (a part of
/// splitModule): its attributes are stripped in place, not on a copy.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateOwned(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
               llvm::TargetMachine &tm) {
  stripNonLLVMAttributes(module);
  module->removeAttr(aot::kColdAttrName);
  std::unique_ptr<llvm::Module> llvmModule =
      mlir::translateModuleToLLVMIR(module, llvmContext, "kcc");
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(tm.getTargetTriple().str());
  llvmModule->setDataLayout(tm.createDataLayout());
  return llvmModule;
}
} // namespace

llvm::Expected<std::unique_ptr<llvm::Module>>
aot::translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                       llvm::TargetMachine &tm) {
  mlir::OwningOpRef<mlir::ModuleOp> stripped = module.clone();
  return translateOwned(*stripped, llvmContext, tm);
}

// kc-lower-loops hands LLVM kernels that are fused, tiled and vectorized
// already. What is left for LLVM: scalarize the memref descriptors (sroa),
// fold the lowering's redundant address arithmetic and loads (early-cse,
// instcombine, gvn), hoist invariants out of the loops (rotated, so that
// licm and the vectorizer see their preheaders), and vectorize the few
// loops kc leaves scalar (copies, concatenations). LLVM's -O3 spent 3x as
// long on the same IR (165 against 57 ms CPU on the activations fixture)
// for steps as fast across the fixture zoo (docs/benchmarks.md), but for
// the LSTM's, 4-6% slower here: loop(indvars) wins 4% of it back and costs
// 15 ms of the activations fixture's compile, about what it would save the
// LSTM over an epoch of Fashion-MNIST (1875 steps).
llvm::StringRef aot::kernelPipeline() {
  return "function(sroa,early-cse<memssa>,instcombine<no-verify-fixpoint>,"
         "simplifycfg,loop-mssa(loop-rotate,licm),gvn,loop-vectorize,"
         "instcombine<no-verify-fixpoint>,simplifycfg)";
}

llvm::Error aot::optimize(llvm::Module &module, llvm::TargetMachine &tm,
                          const TargetOptions &target) {
  // No loop unrolling in any pipeline, default<O3> included: unrolling the
  // vectorized loops kc-lower-loops emits (fully, the short ones) took half
  // of LLVM's -O3 time on the fixture zoo (mobilenet: 1.73 s against
  // 0.83 s) for steps no faster in one A/B run.
  // The vectorizers as clang sets them at -O2 and above (LLVM's own
  // defaults leave SLP off), so that default<O3> is what kcc ran before
  // kernelPipeline().
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&tm, tuning);
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);

  llvm::ModulePassManager pipeline;
  if (target.passes.empty() && target.optLevel == 0) {
    pipeline = builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  } else {
    llvm::StringRef passes =
        target.passes.empty() ? kernelPipeline() : target.passes;
    if (llvm::Error err = builder.parsePassPipeline(pipeline, passes))
      return makeError("LLVM pipeline '" + passes +
                       "': " + llvm::toString(std::move(err)));
  }
  pipeline.run(module, modules);
  return llvm::Error::success();
}

llvm::Error aot::emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                            llvm::SmallVectorImpl<char> &buffer) {
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager codegen;
  if (tm.addPassesToEmitFile(codegen, os, nullptr,
                             llvm::CodeGenFileType::ObjectFile))
    return makeError("the target cannot emit object files");
  codegen.run(module);
  return llvm::Error::success();
}

aot::LLVMPart::LLVMPart() = default;
aot::LLVMPart::LLVMPart(LLVMPart &&) = default;
aot::LLVMPart &aot::LLVMPart::operator=(LLVMPart &&) = default;
aot::LLVMPart::~LLVMPart() {
  module.reset(); // before the context that owns its types
}

llvm::Expected<std::vector<aot::LLVMPart>>
aot::translateInParts(mlir::ModuleOp module, const TargetOptions &target) {
  auto tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  // One thread translates: MLIR's translation is cheap next to LLVM's
  // pipeline, and this way it never runs concurrently on one MLIRContext.
  std::vector<LLVMPart> parts;
  for (mlir::OwningOpRef<mlir::ModuleOp> &piece : splitModule(module)) {
    LLVMPart part;
    part.context = std::make_unique<llvm::LLVMContext>();
    part.cold = (*piece)->hasAttr(kColdAttrName);
    auto translated = translateOwned(*piece, *part.context, **tm);
    if (!translated)
      return translated.takeError();
    part.module = std::move(*translated);
    parts.push_back(std::move(part));
  }
  return parts;
}

namespace {

/// Optimizes and emits parts on threads as they are handed in: each thread
/// takes the next part with its own TargetMachine (not thread safe) and the
/// part's own LLVMContext. One object per part, in part order.
class PartCompiler {
public:
  PartCompiler(const aot::TargetOptions &target, size_t parts)
      : target_(target), objects_(parts), errors_(parts) {}

  ~PartCompiler() {
    close();
    for (std::thread &t : pool_)
      t.join();
  }

  /// Starts `threads` threads that compile parts as they arrive.
  void startThreads(unsigned threads) {
    for (unsigned t = 0; t < threads; ++t)
      pool_.emplace_back([this] { work(); });
  }

  void add(size_t index, aot::LLVMPart *part) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back({index, part});
    }
    ready_.notify_one();
  }

  /// No more parts: the calling thread helps with what is queued, then
  /// waits for the threads.
  llvm::Expected<std::vector<std::string>> finish() {
    close();
    work();
    for (std::thread &t : pool_)
      t.join();
    pool_.clear();
    for (const std::string &e : errors_)
      if (!e.empty())
        return makeError(e);
    return std::move(objects_);
  }

private:
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

  void work() {
    while (true) {
      std::pair<size_t, aot::LLVMPart *> next;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return !queue_.empty() || closed_; });
        if (queue_.empty())
          return;
        next = queue_.front();
        queue_.pop_front();
      }
      compile(next.first, *next.second);
    }
  }

  void compile(size_t i, aot::LLVMPart &part) {
    auto tm = aot::createTargetMachine(target_);
    llvm::Error err =
        tm ? aot::optimize(*part.module, **tm, target_) : tm.takeError();
    llvm::SmallVector<char, 0> buffer;
    // Cold code: fast instruction selection and register allocation, no
    // machine-level optimization; the IR was optimized as the others'.
    if (!err && part.cold)
      (*tm)->setOptLevel(llvm::CodeGenOptLevel::None);
    if (!err)
      err = aot::emitObject(*part.module, **tm, buffer);
    if (err)
      errors_[i] = llvm::toString(std::move(err));
    else
      objects_[i].assign(buffer.data(), buffer.size());
    part.module.reset(); // its memory back as soon as it is emitted
  }

  const aot::TargetOptions &target_;
  std::vector<std::string> objects_;
  std::vector<std::string> errors_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::pair<size_t, aot::LLVMPart *>> queue_;
  bool closed_ = false;
  std::vector<std::thread> pool_;
};

unsigned threadsFor(size_t parts) {
  return std::min<unsigned>(
      parts, llvm::hardware_concurrency().compute_thread_count());
}

} // namespace

llvm::Expected<std::vector<std::string>>
aot::optimizeAndEmitParts(std::vector<LLVMPart> &parts,
                          const TargetOptions &target) {
  PartCompiler compiler(target, parts.size());
  for (size_t i = 0; i < parts.size(); ++i)
    compiler.add(i, &parts[i]);
  // The calling thread is one of them.
  unsigned threads = threadsFor(parts.size());
  compiler.startThreads(threads > 0 ? threads - 1 : 0);
  return compiler.finish();
}

llvm::Expected<std::vector<std::string>> aot::translateOptimizeAndEmitParts(
    mlir::ModuleOp module, const TargetOptions &target,
    llvm::function_ref<llvm::Error(llvm::Module &)> prepare,
    llvm::function_ref<void()> translated) {
  auto tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  llvm::SmallVector<mlir::OwningOpRef<mlir::ModuleOp>> pieces =
      splitModule(module);
  std::vector<LLVMPart> parts(pieces.size());
  PartCompiler compiler(target, parts.size());
  // While this thread translates (one thread: one MLIRContext), the others
  // already optimize the parts it has handed over; then it joins them.
  unsigned threads = threadsFor(parts.size());
  compiler.startThreads(threads > 0 ? threads - 1 : 0);
  for (size_t i = 0; i < pieces.size(); ++i) {
    LLVMPart &part = parts[i];
    part.context = std::make_unique<llvm::LLVMContext>();
    part.cold = (*pieces[i])->hasAttr(kColdAttrName);
    auto llvmModule = translateOwned(*pieces[i], *part.context, **tm);
    pieces[i] = nullptr;
    if (!llvmModule)
      return llvmModule.takeError();
    part.module = std::move(*llvmModule);
    if (prepare)
      if (llvm::Error err = prepare(*part.module))
        return err;
    compiler.add(i, &part);
  }
  if (translated)
    translated();
  return compiler.finish();
}
