//===- CompiledFunction.cpp - A kc function JIT-compiled for the CPU ------===//
//
// compile(): copy the function into a module of its own, run
// kc-cpu-pipeline, hand the LLVM dialect to MLIR's ExecutionEngine (ORC
// LLJIT) with a host TargetMachine and -O3, register the kcc_rt_* library
// entry points, and look the packed entry up once. run() then is one
// indirect call per step.
//
//===----------------------------------------------------------------------===//

#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h" // dtypeOf
#include "ir/KcAttributes.h"
#include "runtime/Error.h"
#include "runtime/FlushDenormals.h"
#include "runtime/LibraryCalls.h"
#include "runtime/MemoryBudget.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <mutex>

#define DEBUG_TYPE "kcc-jit"

using namespace kcc;

struct CompiledFunction::Impl {
  std::string name;
  std::vector<TensorSpec> args, results;
  std::string llvmDialect, llvmIR;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  void (*entry)(void **) = nullptr;
  /// kc-plan-memory's arena, passed as the entry's trailing argument.
  NDArray arena;
  int64_t arenaBytes = 0;
  std::vector<std::pair<unsigned, unsigned>> inPlace;
  KernelCount kernels;
  std::optional<MemoryPlanReport> plan;
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

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
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
     << target.features << "|O" << target.optLevel << "|ir:" << keepIR;
  return key;
}

mlir::LogicalResult kcc::lowerForCpu(mlir::ModuleOp module,
                                     const CpuOptions &options,
                                     bool cliOptions) {
  mlir::MLIRContext *ctx = module.getContext();
  mlir::DialectRegistry registry;
  registerCodegenInterfaces(registry);
  ctx->appendDialectRegistry(registry);
  mlir::PassManager pm(ctx);
  if (cliOptions) {
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return mlir::failure();
    mlir::applyDefaultTimingPassManagerCLOptions(pm);
  }
  buildCpuPipeline(pm, *options.pipeline);
  return pm.run(module);
}

CompiledFunction CompiledFunction::compile(mlir::ModuleOp module,
                                           llvm::StringRef funcName,
                                           const CpuOptions &options) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func || func.isExternal())
    throw Error("compile: no function @" + funcName.str() + " with a body");
  auto impl = std::make_unique<Impl>();
  impl->name = funcName.str();
  impl->args = specsOf(func.getArgumentTypes(), "argument");
  impl->results = specsOf(func.getResultTypes(), "result");

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
      throw Error("compile @" + impl->name + ": lowering failed:\n" +
                  diagnostics);
  }
  if (options.keepIR) {
    llvm::raw_string_ostream os(impl->llvmDialect);
    lowered->print(os);
  }
  if (mlir::Operation *f = lowered->lookupSymbol(impl->name)) {
    if (std::optional<llvm::ArrayRef<int64_t>> pairs = kc::getInPlacePairs(f))
      for (size_t i = 0; i + 1 < pairs->size(); i += 2)
        impl->inPlace.emplace_back((*pairs)[i], (*pairs)[i + 1]);
    if (std::optional<KernelCount> count = readKernelCount(f))
      impl->kernels = *count;
    impl->plan = readMemoryPlan(f);
  }
  if (impl->plan && options.pipeline->arenaArg) {
    impl->arenaBytes = impl->plan->arenaBytes;
    // Checked before the JIT compiles anything: a plan too big for this
    // machine is an error that says how big, not std::bad_alloc.
    requireMemory(impl->arenaBytes, "compile @" + impl->name + ": the arena");
    // 64-byte aligned like every NDArray; i64 elements cover the bytes.
    impl->arena =
        NDArray::empty({std::max<int64_t>(1, impl->arenaBytes / 8 +
                                                 (impl->arenaBytes % 8 != 0))},
                       DType::I64);
  }

  initializeNativeTarget();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    throw Error("compile: cannot describe the host: " +
                errorText(jtmb.takeError()));
  if (!options.target.cpu.empty())
    jtmb->setCPU(options.target.cpu);
  if (!options.target.features.empty())
    jtmb->addFeatures(llvm::SubtargetFeatures(options.target.features).getFeatures());
  auto level = options.target.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
               : options.target.optLevel == 2 ? llvm::CodeGenOptLevel::Default
               : options.target.optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                       : llvm::CodeGenOptLevel::None;
  jtmb->setCodeGenOptLevel(level);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    throw Error("compile: no target machine for the host: " +
                errorText(tm.takeError()));

  auto optimize =
      mlir::makeOptimizingTransformer(std::min(options.target.optLevel, 3u),
                                      /*sizeLevel=*/0, tm->get());
  std::string *irText = options.keepIR ? &impl->llvmIR : nullptr;
  auto transformer = [&](llvm::Module *m) -> llvm::Error {
    if (irText) {
      llvm::raw_string_ostream os(*irText);
      m->print(os, nullptr);
    }
    return optimize(m);
  };
  mlir::ExecutionEngineOptions eeOpts;
  eeOpts.transformer = transformer;
  eeOpts.jitCodeGenOptLevel = level;
  // KCC_PERF=1 names the jitted functions for `perf record -k 1` followed by
  // `perf inject --jit` (how docs/benchmarks.md's profiles were taken).
  eeOpts.enablePerfNotificationListener = getenv("KCC_PERF") != nullptr;
  auto engine = mlir::ExecutionEngine::create(*lowered, eeOpts, std::move(*tm));
  if (!engine)
    throw Error("compile @" + impl->name +
                ": JIT failed: " + errorText(engine.takeError()) + diagnostics);
  impl->engine = std::move(*engine);
  impl->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (auto &[name, ptr] : jit::libraryCallSymbols())
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(ptr),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  auto entry = impl->engine->lookupPacked(impl->name);
  if (!entry)
    throw Error("compile @" + impl->name +
                ": entry not found: " + errorText(entry.takeError()));
  impl->entry = *entry;
  LLVM_DEBUG(llvm::dbgs() << "compiled @" << impl->name << "\n");
  return CompiledFunction(std::move(impl));
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
  std::vector<NDArray> outs(impl_->results.size());
  for (auto [result, arg] : impl_->inPlace)
    if (arg < callArgs.size() && result < outs.size()) {
      callArgs[arg] = args[arg].clone();
      outs[result] = callArgs[arg];
    }
  for (size_t i = 0; i < outs.size(); ++i)
    if (!outs[i].defined())
      outs[i] = NDArray::empty(impl_->results[i].shape, impl_->results[i].dtype);
  runInto(callArgs, outs);
  return outs;
}

void CompiledFunction::runInto(const std::vector<NDArray> &args,
                               std::vector<NDArray> &outs) const {
  checkArrays("arguments", args, impl_->args, impl_->name);
  checkArrays("results", outs, impl_->results, impl_->name);
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
  return impl_->args;
}
const std::vector<TensorSpec> &CompiledFunction::resultSpecs() const {
  return impl_->results;
}
const std::string &CompiledFunction::name() const { return impl_->name; }
std::string CompiledFunction::llvmDialect() const { return impl_->llvmDialect; }
std::string CompiledFunction::llvmIR() const { return impl_->llvmIR; }
int64_t CompiledFunction::arenaBytes() const { return impl_->arenaBytes; }
const KernelCount &CompiledFunction::kernelCount() const {
  return impl_->kernels;
}
const std::optional<MemoryPlanReport> &CompiledFunction::memoryPlan() const {
  return impl_->plan;
}
const std::vector<std::pair<unsigned, unsigned>> &
CompiledFunction::inPlaceResults() const {
  return impl_->inPlace;
}
