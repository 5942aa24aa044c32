//===- CompiledFunction.cpp - A kc function JIT-compiled for the CPU ------===//
//
// build(): copy the function into a module of its own, run
// kc-cpu-pipeline, translate its parts (aot::splitModule) to LLVM IR, add
// the packed entry, optimize and emit the parts on threads, one object each
// (codegen/aot, as `kcc --emit=obj` does), the first parts while the rest
// are still being translated. load(): an LLJIT
// over RuntimeDyld with SectionMemoryManager (what MLIR's ExecutionEngine
// builds) placing every section in one JitMemorySlab (within the small code
// model's 2 GiB reach), the kcc_rt_* library entry points and the process's own
// symbols; add the objects and look the packed entry up once. run() then is one
// indirect call per step.
//
//===----------------------------------------------------------------------===//

#include "engine/CompiledFunction.h"
#include "engine/CompileTiming.h"
#include "engine/JitMemorySlab.h"
#include "engine/interpreter/Interpreter.h" // dtypeOf
#include "ir/KcAttributes.h"
#include "runtime/Collectives.h"
#include "runtime/Error.h"
#include "runtime/FlushDenormals.h"
#include "runtime/LibraryCalls.h"
#include "runtime/MemoryBudget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/JITEventListener.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/ExecutionEngine/Orc/RTDyldObjectLinkingLayer.h"
#include "llvm/ExecutionEngine/SectionMemoryManager.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdlib>
#include <optional>
#include <string_view>

#define DEBUG_TYPE "kcc-jit"

using namespace kcc;

struct CompiledFunction::Impl {
  /// The artifact's metadata (its object is in the JIT, not here).
  CompiledArtifact meta;
  /// Where the JIT's sections live; outlives the JIT (declared before it).
  std::unique_ptr<JitMemorySlab> jitMemory;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*entry)(void **) = nullptr;
  /// kc-plan-memory's arena, passed as the entry's trailing argument.
  NDArray arena;
  int64_t arenaBytes = 0;
};

namespace {

DType dtypeOfType(mlir::Type t, llvm::StringRef what) {
  try {
    return dtypeOf(t);
  } catch (const Error &e) {
    throw Error("compile: " + std::string(e.what()) + " (" + what.str() + ")");
  }
}

std::vector<TensorSpec> specsOf(mlir::TypeRange types, llvm::StringRef what) {
  std::vector<TensorSpec> specs;
  for (mlir::Type t : types) {
    auto rt = llvm::dyn_cast<mlir::RankedTensorType>(t);
    if (!rt || !rt.hasStaticShape()) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << "compile: " << what << " type " << t
         << " is not a statically shaped tensor";
      throw Error(s);
    }
    specs.push_back({Shape(rt.getShape().begin(), rt.getShape().end()),
                     dtypeOfType(rt.getElementType(), what)});
  }
  return specs;
}

std::string errorText(llvm::Error err) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << err;
  return s;
}

/// Copies `func` and every function it calls into a fresh module, so other
/// functions of the caller's module neither get compiled nor block it.
mlir::OwningOpRef<mlir::ModuleOp> extract(mlir::ModuleOp module,
                                          mlir::func::FuncOp func) {
  mlir::OpBuilder b(module.getContext());
  mlir::OwningOpRef<mlir::ModuleOp> out =
      mlir::ModuleOp::create(module.getLoc());
  b.setInsertionPointToEnd(out->getBody());
  llvm::SmallVector<mlir::func::FuncOp> work = {func};
  llvm::StringSet<> seen;
  seen.insert(func.getSymName());
  while (!work.empty()) {
    mlir::func::FuncOp f = work.pop_back_val();
    auto copy = llvm::cast<mlir::func::FuncOp>(b.clone(*f));
    copy.setVisibility(f == func ? mlir::SymbolTable::Visibility::Public
                                 : mlir::SymbolTable::Visibility::Private);
    f.walk([&](mlir::func::CallOp call) {
      if (auto callee =
              module.lookupSymbol<mlir::func::FuncOp>(call.getCallee()))
        if (seen.insert(callee.getSymName()).second)
          work.push_back(callee);
    });
  }
  return out;
}

void checkArrays(const char *what, const std::vector<NDArray> &arrays,
                 const std::vector<TensorSpec> &specs, const std::string &fn) {
  if (arrays.size() != specs.size())
    throw Error(fn + ": expected " + std::to_string(specs.size()) + " " + what +
                ", got " + std::to_string(arrays.size()));
  for (size_t i = 0; i < specs.size(); ++i) {
    const NDArray &a = arrays[i];
    if (!a.defined() || a.shape() != specs[i].shape ||
        a.dtype() != specs[i].dtype)
      throw Error(fn + ": " + what + " #" + std::to_string(i) + " must be " +
                  dtypeName(specs[i].dtype) + " " +
                  shapeToString(specs[i].shape) + ", got " +
                  (a.defined() ? std::string(dtypeName(a.dtype())) + " " +
                                     shapeToString(a.shape())
                               : std::string("an undefined array")));
  }
}

} // namespace

CpuOptions::CpuOptions() : pipeline(std::make_unique<CpuPipelineOptions>()) {
  pipeline->arenaArg = true;
  pipeline->inPlaceUpdates = true;
}

CpuOptions::CpuOptions(const CpuOptions &other)
    : pipeline(std::make_unique<CpuPipelineOptions>()) {
  *this = other;
}

CpuOptions &CpuOptions::operator=(const CpuOptions &other) {
  if (this == &other)
    return *this;
  pipeline->copyOptionValuesFrom(*other.pipeline);
  target = other.target;
  keepIR = other.keepIR;
  return *this;
}

CpuOptions::~CpuOptions() = default;

std::string CpuOptions::key() const {
  std::string key;
  llvm::raw_string_ostream os(key);
  // print() writes every pipeline option, so a new option is in the key
  // without anyone listing it here.
  pipeline->print(os);
  os << "|cpu:" << (target.cpu.empty() ? "host" : target.cpu) << "+"
     << target.features << "|O" << target.optLevel
     << "|passes:" << target.passes << "|ir:" << keepIR;
  return key;
}

mlir::LogicalResult kcc::lowerForCpu(mlir::ModuleOp module,
                                     const CpuOptions &options,
                                     bool cliOptions) {
  mlir::MLIRContext *ctx = module.getContext();
  mlir::DialectRegistry registry;
  registerCodegenInterfaces(registry);
  ctx->appendDialectRegistry(registry);
  CompilePhase phase("kc-cpu-pipeline");
  mlir::PassManager pm(ctx);
  if (cliOptions && mlir::failed(mlir::applyPassManagerCLOptions(pm)))
    return mlir::failure();
  phase.timePasses(pm);
  // Verifying the whole module after each of the pipeline's ~45 passes took
  // 40% of kc-cpu-pipeline (0.19 of 0.45 s on the activations fixture). A
  // release build verifies once, at the end, before LLVM sees the module;
  // a debug build, or KCC_VERIFY_EACH=1, after every pass.
#ifdef NDEBUG
  static const bool verifyEach = [] {
    const char *env = std::getenv("KCC_VERIFY_EACH");
    return env && *env && std::string_view(env) != "0";
  }();
#else
  constexpr bool verifyEach = true;
#endif
  pm.enableVerifier(verifyEach);
  buildCpuPipeline(pm, *options.pipeline);
  if (mlir::failed(pm.run(module)))
    return mlir::failure();
  if (verifyEach)
    return mlir::success();
  CompilePhase verify("verify");
  return mlir::verify(module);
}

std::string kcc::packedEntryName(llvm::StringRef name) {
  return "_kcc_packed_" + name.str();
}

namespace {

/// Adds `void packedEntryName(name)(void **args)` to `m`: it loads each
/// argument of @name from the pointer args[i] points to and calls @name
/// (whose results, with the bare-pointer ABI, are out-pointer arguments
/// too), as MLIR's ExecutionEngine does for its `_mlir_` wrappers.
llvm::Error addPackedEntry(llvm::Module &m, llvm::StringRef name) {
  llvm::Function *f = m.getFunction(name);
  if (!f || f->isDeclaration())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "no function @" + name + " in LLVM IR");
  if (!f->getReturnType()->isVoidTy())
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "@" + name + " returns a value; the bare-pointer ABI returns none");
  llvm::LLVMContext &ctx = m.getContext();
  llvm::IRBuilder<> b(ctx);
  auto *type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()},
                                       /*isVarArg=*/false);
  llvm::Function *packed = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, packedEntryName(name), m);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", packed));
  llvm::SmallVector<llvm::Value *, 16> args;
  for (auto [index, arg] : llvm::enumerate(f->args())) {
    llvm::Value *slot =
        b.CreateConstGEP1_64(b.getPtrTy(), packed->getArg(0), index);
    llvm::Value *pointer = b.CreateLoad(b.getPtrTy(), slot);
    args.push_back(b.CreateLoad(arg.getType(), pointer));
  }
  b.CreateCall(f, args);
  b.CreateRetVoid();
  return llvm::Error::success();
}

} // namespace

CompiledArtifact CompiledFunction::build(mlir::ModuleOp module,
                                         llvm::StringRef funcName,
                                         const CpuOptions &options) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func || func.isExternal())
    throw Error("compile: no function @" + funcName.str() + " with a body");
  CompiledArtifact artifact;
  artifact.name = funcName.str();
  artifact.args = specsOf(func.getArgumentTypes(), "argument");
  artifact.results = specsOf(func.getResultTypes(), "result");
  const std::string &name = artifact.name;

  mlir::MLIRContext *ctx = module.getContext();
  mlir::OwningOpRef<mlir::ModuleOp> lowered = extract(module, func);

  // Collect diagnostics instead of printing them: they become the Error.
  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &diag) {
      llvm::raw_string_ostream os(diagnostics);
      os << diag.getLocation() << ": " << diag << "\n";
      for (mlir::Diagnostic &note : diag.getNotes())
        os << note.getLocation() << ": note: " << note << "\n";
      return mlir::success();
    });
    if (mlir::failed(lowerForCpu(*lowered, options)))
      throw Error("compile @" + name + ": lowering failed:\n" + diagnostics);
  }
  if (options.keepIR) {
    llvm::raw_string_ostream os(artifact.llvmDialect);
    lowered->print(os);
  }
  if (mlir::Operation *f = lowered->lookupSymbol(name)) {
    if (std::optional<llvm::ArrayRef<int64_t>> pairs = kc::getInPlacePairs(f))
      for (size_t i = 0; i + 1 < pairs->size(); i += 2)
        artifact.inPlace.emplace_back((*pairs)[i], (*pairs)[i + 1]);
    if (std::optional<KernelCount> count = readKernelCount(f))
      artifact.kernels = *count;
    artifact.plan = readMemoryPlan(f);
  }
  artifact.arenaArg = artifact.plan && options.pipeline->arenaArg;
  // Checked before LLVM compiles anything: a plan too big for this machine
  // is an error that says how big, not std::bad_alloc.
  if (artifact.arenaArg)
    requireMemory(artifact.plan->arenaBytes,
                  "compile @" + name + ": the arena");

  // Translation overlaps with LLVM: the other threads optimize and emit the
  // parts translated so far. "LLVM IR translation" is the time until the
  // last part is translated, "LLVM -O<n> and machine code" the rest.
  bool hasEntry = false;
  auto prepare = [&](llvm::Module &part) -> llvm::Error {
    llvm::Function *f = part.getFunction(name);
    if (f && !f->isDeclaration()) {
      hasEntry = true;
      if (llvm::Error err = addPackedEntry(part, name))
        return err;
    }
    if (options.keepIR) {
      llvm::raw_string_ostream os(artifact.llvmIR);
      part.print(os, nullptr);
    }
    return llvm::Error::success();
  };
  {
    std::optional<CompilePhase> phase;
    phase.emplace("LLVM IR translation");
    auto objects = aot::translateOptimizeAndEmitParts(
        *lowered, options.target, prepare, [&] {
          phase.reset();
          phase.emplace("LLVM -O" + std::to_string(options.target.optLevel) +
                        " and machine code");
        });
    if (!objects)
      throw Error("compile @" + name + ": " + errorText(objects.takeError()) +
                  "\n" + diagnostics);
    if (!hasEntry)
      throw Error("compile @" + name + ": no function @" + name +
                  " in LLVM IR");
    artifact.objects = std::move(*objects);
  }
  LLVM_DEBUG(llvm::dbgs() << "built @" << name << ": "
                          << artifact.objects.size() << " objects\n");
  return artifact;
}

CompiledFunction CompiledFunction::load(const CompiledArtifact &artifact) {
  CompilePhase phase("JIT link");
  const std::string &name = artifact.name;
  auto impl = std::make_unique<Impl>();
  impl->meta = artifact;
  impl->meta.objects.clear();
  if (artifact.arenaArg) {
    impl->arenaBytes = artifact.plan ? artifact.plan->arenaBytes : 0;
    requireMemory(impl->arenaBytes, "compile @" + name + ": the arena");
    // 64-byte aligned like every NDArray; i64 elements cover the bytes.
    impl->arena =
        NDArray::empty({std::max<int64_t>(1, impl->arenaBytes / 8 +
                                                 (impl->arenaBytes % 8 != 0))},
                       DType::I64);
  }

  // KCC_PERF=1 names the jitted functions for `perf record -k 1` followed by
  // `perf inject --jit` (how docs/benchmarks.md's profiles were taken); the
  // GDB listener lets a debugger see them, as MLIR's ExecutionEngine does.
  llvm::JITEventListener *perf =
      getenv("KCC_PERF") ? llvm::JITEventListener::createPerfJITEventListener()
                         : nullptr;
  llvm::JITEventListener *gdb =
      llvm::JITEventListener::createGDBRegistrationListener();
  try {
    impl->jitMemory =
        std::make_unique<JitMemorySlab>(jitSlabBytes(artifact.objects));
  } catch (const Error &e) {
    throw Error("compile @" + name + ": " + e.what());
  }
  JitMemorySlab *slab = impl->jitMemory.get();
  auto jit =
      llvm::orc::LLJITBuilder()
          .setObjectLinkingLayerCreator(
              [&](llvm::orc::ExecutionSession &session, const llvm::Triple &)
                  -> llvm::Expected<std::unique_ptr<llvm::orc::ObjectLayer>> {
                auto layer =
                    std::make_unique<llvm::orc::RTDyldObjectLinkingLayer>(
                        session, [slab] {
                          return std::make_unique<llvm::SectionMemoryManager>(
                              slab);
                        });
                if (gdb)
                  layer->registerJITEventListener(*gdb);
                if (perf)
                  layer->registerJITEventListener(*perf);
                return layer;
              })
          // The code has no static constructors to run: no platform.
          .setPlatformSetUp(llvm::orc::setUpInactivePlatform)
          .create();
  if (!jit)
    throw Error("compile @" + name +
                ": cannot create the JIT: " + errorText(jit.takeError()));
  impl->jit = std::move(*jit);
  llvm::orc::JITDylib &main = impl->jit->getMainJITDylib();
  llvm::orc::MangleAndInterner interner(impl->jit->getExecutionSession(),
                                        impl->jit->getDataLayout());
  llvm::orc::SymbolMap library;
  for (auto &[symbol, ptr] : jit::libraryCallSymbols())
    library[interner(symbol)] = {llvm::orc::ExecutorAddr::fromPtr(ptr),
                                 llvm::JITSymbolFlags::Exported};
  // The collectives' entry points live with MPI, outside the AOT runtime.
  auto collective = [&](const char *symbol, auto *fn) {
    library[interner(symbol)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                 llvm::JITSymbolFlags::Exported};
  };
  collective("kcc_rt_all_reduce_f32", &kcc_rt_all_reduce_f32);
  collective("kcc_rt_all_reduce_f64", &kcc_rt_all_reduce_f64);
  collective("kcc_rt_all_reduce_start_f32", &kcc_rt_all_reduce_start_f32);
  collective("kcc_rt_all_reduce_start_f64", &kcc_rt_all_reduce_start_f64);
  collective("kcc_rt_all_reduce_wait_f32", &kcc_rt_all_reduce_wait_f32);
  collective("kcc_rt_all_reduce_wait_f64", &kcc_rt_all_reduce_wait_f64);
  if (llvm::Error err = main.define(llvm::orc::absoluteSymbols(library)))
    throw Error("compile @" + name + ": " + errorText(std::move(err)));
  for (auto [index, object] : llvm::enumerate(artifact.objects))
    if (llvm::Error err =
            impl->jit->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
                object, "kcc-" + name + "-" + std::to_string(index) + ".o")))
      throw Error("compile @" + name +
                  ": cannot add the object: " + errorText(std::move(err)));
  auto entry = impl->jit->lookup(packedEntryName(name));
  if (!entry)
    throw Error("compile @" + name +
                ": entry not found: " + errorText(entry.takeError()));
  impl->entry = entry->toPtr<void (*)(void **)>();
  LLVM_DEBUG(llvm::dbgs() << "linked @" << name << "\n");
  return CompiledFunction(std::move(impl));
}

CompiledFunction CompiledFunction::compile(mlir::ModuleOp module,
                                           llvm::StringRef funcName,
                                           const CpuOptions &options) {
  return load(build(module, funcName, options));
}

CompiledFunction::CompiledFunction(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
CompiledFunction::CompiledFunction(CompiledFunction &&) noexcept = default;
CompiledFunction &
CompiledFunction::operator=(CompiledFunction &&) noexcept = default;
CompiledFunction::~CompiledFunction() = default;

std::vector<NDArray>
CompiledFunction::run(const std::vector<NDArray> &args) const {
  // A result updated in place is written over its argument: give the call
  // a copy of that argument, so the caller's arrays stay as they were.
  std::vector<NDArray> callArgs = args;
  std::vector<NDArray> outs(impl_->meta.results.size());
  for (auto [result, arg] : impl_->meta.inPlace)
    if (arg < callArgs.size() && result < outs.size()) {
      callArgs[arg] = args[arg].clone();
      outs[result] = callArgs[arg];
    }
  for (size_t i = 0; i < outs.size(); ++i)
    if (!outs[i].defined())
      outs[i] = NDArray::empty(impl_->meta.results[i].shape,
                               impl_->meta.results[i].dtype);
  runInto(callArgs, outs);
  return outs;
}

void CompiledFunction::runInto(const std::vector<NDArray> &args,
                               std::vector<NDArray> &outs) const {
  checkArrays("arguments", args, impl_->meta.args, impl_->meta.name);
  checkArrays("results", outs, impl_->meta.results, impl_->meta.name);
  ScopedFlushDenormals ftz;
  // Bare-pointer ABI: one T* per argument, then one per result; the packed
  // wrapper takes the address of each.
  llvm::SmallVector<void *, 16> ptrs, packed;
  for (const NDArray &a : args)
    ptrs.push_back(const_cast<void *>(a.rawData()));
  for (NDArray &o : outs)
    ptrs.push_back(o.rawData());
  if (impl_->arena.defined())
    ptrs.push_back(impl_->arena.rawData());
  for (void *&p : ptrs)
    packed.push_back(&p);
  impl_->entry(packed.data());
}

const std::vector<TensorSpec> &CompiledFunction::argSpecs() const {
  return impl_->meta.args;
}
const std::vector<TensorSpec> &CompiledFunction::resultSpecs() const {
  return impl_->meta.results;
}
const std::string &CompiledFunction::name() const { return impl_->meta.name; }
std::string CompiledFunction::llvmDialect() const {
  return impl_->meta.llvmDialect;
}
std::string CompiledFunction::llvmIR() const { return impl_->meta.llvmIR; }
int64_t CompiledFunction::arenaBytes() const { return impl_->arenaBytes; }
const KernelCount &CompiledFunction::kernelCount() const {
  return impl_->meta.kernels;
}
const std::optional<MemoryPlanReport> &CompiledFunction::memoryPlan() const {
  return impl_->meta.plan;
}
const std::vector<std::pair<unsigned, unsigned>> &
CompiledFunction::inPlaceResults() const {
  return impl_->meta.inPlace;
}
