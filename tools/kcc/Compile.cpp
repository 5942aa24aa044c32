//===- Compile.cpp - kcc's compile command --------------------------------===//
//
// One function per stage boundary. Outputs are reserved before any work (an
// unwritable -o fails at once) and committed only after the last stage, so a
// failure never leaves a partial output; --dump-dir files are written as
// each stage completes, so the stages before a failure stay inspectable.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "Diagnostics.h"
#include "FusionReport.h"
#include "ModelLoader.h"

#include "codegen/Passes.h"
#include "codegen/aot/AotCompiler.h"
#include "codegen/aot/CHeader.h"
#include "codegen/aot/OutputFiles.h"
#include "engine/CompileTiming.h"
#include "frontend/Trace.h"
#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"
#include "tools/input/MlirInput.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <functional>

using namespace mlir;
using namespace kcc;
using namespace kcc::driver;

namespace {

std::string moduleText(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

/// "out/mlp_step.o" -> "out/mlp_step.h".
std::string headerPathFor(llvm::StringRef output) {
  llvm::SmallString<128> path(output);
  llvm::sys::path::replace_extension(path, "h");
  return path.str().str();
}

bool isIdentifier(llvm::StringRef s) {
  return !s.empty() && !llvm::isDigit(s[0]) &&
         llvm::all_of(s, [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

/// Drives one compilation; see Compile.h for the stages.
class Compilation {
public:
  Compilation(const CompileConfig &config, MLIRContext &context)
      : config_(config), context_(context) {}
  /// The step of a model being trained: `model` at `training`, its stages
  /// dumped and reported as the flags say, nothing written to stdout.
  Compilation(const CompileConfig &config, MLIRContext &context,
              LoadedModel &model, const TrainingConfig &training)
      : config_(config), context_(context), trained_(&model),
        training_(&training) {}

  int run();

private:
  bool reaches(EmitAction action) const { return config_.emit >= action; }
  bool isLast(EmitAction action) const { return config_.emit == action; }
  /// Writes a stage to --dump-dir (as NN-name); false on an I/O error.
  bool dump(llvm::StringRef fileName, llvm::StringRef text);
  /// The same for a module, printed only when there is a --dump-dir
  /// (printing a deep model's step costs as much as a pass).
  bool dump(llvm::StringRef fileName, ModuleOp module) {
    return config_.dumpDir.empty() || dump(fileName, moduleText(module));
  }
  /// Writes the final text output (-o, default stdout) and commits.
  int finish(llvm::StringRef text);
  /// Runs `build`'s passes with MLIR's command-line options applied, timed
  /// as `pipeline` (--time-passes).
  LogicalResult runPasses(llvm::StringRef pipeline, ModuleOp module,
                          const std::function<void(OpPassManager &)> &build);

  int reserveOutputs();
  LogicalResult load();
  void renameFunctions(ModuleOp module);
  int emitNative(ModuleOp llvmDialectModule, ModuleOp kcModule);

  const CompileConfig &config_;
  MLIRContext &context_;
  llvm::SourceMgr sourceMgr_;
  std::unique_ptr<SourceMgrDiagnosticHandler> sourceDiagnostics_;
  OwningOpRef<ModuleOp> module_;
  LoadedModel model_;
  /// kcc train's model and step (then `model_` is unused).
  LoadedModel *trained_ = nullptr;
  const TrainingConfig *training_ = nullptr;
  aot::OutputFiles outputs_;
  std::optional<unsigned> outputIndex_, headerIndex_;
  std::optional<double> learningRate_;
};

int Compilation::reserveOutputs() {
  bool native = reaches(EmitAction::Obj);
  if (native && config_.output == "-")
    return fail(
        "--emit=" + std::string(isLast(EmitAction::Obj) ? "obj" : "lib") +
        " needs an output file (-o)");
  if (config_.output != "-") {
    auto index = outputs_.reserve(config_.output);
    if (!index)
      return fail(index.takeError());
    outputIndex_ = *index;
  }
  if (native) {
    std::string header = headerPathFor(config_.output);
    if (header == config_.output)
      return fail("-o " + config_.output +
                  " would overwrite the C header written next to it");
    auto index = outputs_.reserve(header);
    if (!index)
      return fail(index.takeError());
    headerIndex_ = *index;
  }
  if (!config_.dumpDir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(config_.dumpDir))
      return fail("cannot create --dump-dir '" + config_.dumpDir +
                  "': " + ec.message());
  return 0;
}

bool Compilation::dump(llvm::StringRef fileName, llvm::StringRef text) {
  if (config_.dumpDir.empty())
    return true;
  llvm::SmallString<128> path(config_.dumpDir);
  llvm::sys::path::append(path, fileName);
  aot::OutputFiles files;
  auto index = files.reserve(path);
  llvm::Error err = index ? files.write(*index, text) : index.takeError();
  if (!err)
    err = files.commit();
  if (err) {
    fail(std::move(err));
    return false;
  }
  return true;
}

int Compilation::finish(llvm::StringRef text) {
  if (trained_)
    return 0; // kcc train wrote the stages; the training is the output
  if (!outputIndex_) {
    llvm::outs() << text;
    llvm::outs().flush();
    return 0;
  }
  if (llvm::Error err = outputs_.write(*outputIndex_, text))
    return fail(std::move(err));
  if (llvm::Error err = outputs_.commit())
    return fail(std::move(err));
  return 0;
}

LogicalResult
Compilation::runPasses(llvm::StringRef pipeline, ModuleOp module,
                       const std::function<void(OpPassManager &)> &build) {
  CompilePhase phase(pipeline);
  PassManager pm(&context_);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  phase.timePasses(pm);
  build(pm);
  return pm.run(module);
}

LogicalResult Compilation::load() {
  const ModelSource &source = config_.source;
  if (isMlirInput(source)) {
    std::string error;
    auto file = tools::readMlirInput(source.input, error);
    if (!file) {
      fail(error);
      return failure();
    }
    unsigned id = sourceMgr_.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    if (!tools::checkMlirNesting(sourceMgr_, id))
      return failure();
    sourceDiagnostics_ =
        std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr_, &context_);
    // Verified after kc::checkDenseArrayStorage: a verifier's diagnostic
    // prints the op, which a malformed dense array crashes.
    module_ = parseSourceFile<ModuleOp>(
        sourceMgr_, ParserConfig(&context_, /*verifyAfterParse=*/false));
    if (module_ && (failed(kc::checkDenseArrayStorage(*module_)) ||
                    failed(verify(*module_))))
      module_ = nullptr;
    return success(static_cast<bool>(module_));
  }
  if (!trained_) {
    auto loaded = loadModel(source);
    if (!loaded) {
      fail(loaded.takeError());
      return failure();
    }
    model_ = std::move(*loaded);
  }
  LoadedModel &model = trained_ ? *trained_ : model_;
  try {
    TraceOptions trace;
    trace.batch = training_ ? training_->batch : source.batch;
    // The training-mode forward is what kc-build-train-step differentiates.
    trace.training = true;
    module_ = traceForward(context_, *model.model, trace);
  } catch (const Error &e) {
    fail(model.name + ": " + e.what());
    return failure();
  }
  return success();
}

void Compilation::renameFunctions(ModuleOp module) {
  if (config_.prefix.empty())
    return;
  for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    auto name = StringAttr::get(&context_, config_.prefix + f.getSymName());
    if (failed(SymbolTable::replaceAllSymbolUses(f, name, module)))
      continue;
    f.setSymNameAttr(name);
  }
}

int Compilation::emitNative(ModuleOp llvmDialectModule, ModuleOp kcModule) {
  const aot::TargetOptions &target = config_.cpu.target;
  std::string opt = "LLVM -O" + std::to_string(target.optLevel);
  // --emit=llvm (and --dump-dir) print the module whole, optimized as one.
  if (isLast(EmitAction::Llvm) || !config_.dumpDir.empty()) {
    auto tm = aot::createTargetMachine(target);
    if (!tm)
      return fail(tm.takeError());
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule;
    {
      CompilePhase phase("LLVM IR translation");
      auto translated =
          aot::translateToLLVMIR(llvmDialectModule, llvmContext, **tm);
      if (!translated)
        return fail(translated.takeError());
      llvmModule = std::move(*translated);
    }
    {
      CompilePhase phase(opt);
      if (llvm::Error err = aot::optimize(*llvmModule, **tm, target))
        return fail(std::move(err));
    }
    std::string irText;
    llvm::raw_string_ostream os(irText);
    llvmModule->print(os, nullptr);
    if (!dump("06-llvm.ll", irText))
      return 1;
    if (isLast(EmitAction::Llvm))
      return finish(irText);
  }

  // Objects: the module's parts compile on threads of their own.
  std::vector<std::string> objects;
  {
    std::vector<aot::LLVMPart> parts;
    {
      CompilePhase phase("LLVM IR translation");
      auto translated = aot::translateInParts(llvmDialectModule, target);
      if (!translated)
        return fail(translated.takeError());
      parts = std::move(*translated);
    }
    CompilePhase phase(opt + " and machine code");
    auto emitted = aot::optimizeAndEmitParts(parts, target);
    if (!emitted)
      return fail(emitted.takeError());
    objects = std::move(*emitted);
  }

  aot::HeaderOptions headerOptions;
  headerOptions.guard = aot::toMacroName(headerPathFor(config_.output));
  headerOptions.macroPrefix =
      config_.prefix.empty() ? "KCC_" : aot::toMacroName(config_.prefix);
  if (!llvm::StringRef(headerOptions.macroPrefix).ends_with("_"))
    headerOptions.macroPrefix += "_";
  headerOptions.source =
      model_.name.empty() ? config_.source.input : model_.name;
  headerOptions.learningRate = learningRate_;
  auto header = aot::emitCHeader(kcModule, llvmDialectModule, headerOptions);
  if (!header)
    return fail(header.takeError());
  if (llvm::Error err = outputs_.write(*headerIndex_, *header))
    return fail(std::move(err));

  if (isLast(EmitAction::Obj) && objects.size() == 1) {
    if (llvm::Error err = outputs_.write(*outputIndex_, objects.front()))
      return fail(std::move(err));
    if (llvm::Error err = outputs_.commit())
      return fail(std::move(err));
    return 0;
  }
  // The linker reads the objects from temporaries and writes the object or
  // the library into the output's temporary.
  std::vector<std::string> objectPaths;
  std::vector<std::unique_ptr<llvm::FileRemover>> removers;
  for (const std::string &bytes : objects) {
    llvm::SmallString<128> objectPath;
    int fd;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("kcc-aot", "o", fd, objectPath))
      return fail("cannot create a temporary object file: " + ec.message());
    removers.push_back(std::make_unique<llvm::FileRemover>(objectPath));
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << bytes;
    objectPaths.push_back(objectPath.str().str());
  }
  {
    CompilePhase link(isLast(EmitAction::Obj) ? "link the parts"
                                              : "link the shared library");
    llvm::Error err = isLast(EmitAction::Obj)
                          ? aot::linkRelocatable(
                                objectPaths, outputs_.tempPath(*outputIndex_))
                          : aot::linkSharedLibrary(
                                objectPaths, outputs_.tempPath(*outputIndex_));
    if (err)
      return fail(std::move(err));
  }
  if (llvm::Error err = outputs_.commit())
    return fail(std::move(err));
  return 0;
}

int Compilation::run() {
  if (!config_.prefix.empty() && !isIdentifier(config_.prefix))
    return fail("--prefix '" + config_.prefix +
                "' is not a C identifier prefix");
  if (int rc = reserveOutputs())
    return rc;
  {
    CompilePhase phase("import");
    if (failed(load()))
      return 1;
  }

  // kc: verified on parse/trace, then canonicalized.
  if (failed(runPasses("kc-import-pipeline", *module_,
                       [](OpPassManager &pm) { buildImportPipeline(pm); })))
    return 1;
  if (!dump("01-kc.mlir", *module_))
    return 1;
  if (isLast(EmitAction::Kc))
    return finish(moduleText(*module_));

  // train: the whole step in one function.
  auto training = training_ ? llvm::Expected<TrainingConfig>(*training_)
                            : resolveTrainingConfig(model_, config_.source,
                                                    /*defaultMetrics=*/{});
  if (!training)
    return fail(training.takeError());
  learningRate_ = training->optimizer.resolvedLearningRate();
  if (failed(runPasses("kc-train-pipeline", *module_, [&](OpPassManager &pm) {
        buildTrainPipeline(pm, *training);
      })))
    return 1;
  if (!dump("02-train.mlir", *module_))
    return 1;
  if (isLast(EmitAction::Train))
    return finish(moduleText(*module_));

  // From here on the functions carry their final (prefixed) names.
  renameFunctions(*module_);
  if (config_.fusionReport) {
    if (failed(printFusionReport(*module_, config_.cpu, llvm::outs())))
      return 1;
    // kcc train goes on to dump the stages and train.
    if (!trained_ || config_.dumpDir.empty())
      return 0;
  }
  // linalg and fused: the first half of kc-cpu-pipeline, without and with
  // elementwise fusion.
  for (EmitAction stage : {EmitAction::Linalg, EmitAction::Fused}) {
    if (!reaches(stage) || (!isLast(stage) && config_.dumpDir.empty()))
      continue;
    CpuPipelineOptions stageOptions;
    stageOptions.copyOptionValuesFrom(*config_.cpu.pipeline);
    stageOptions.fuseElementwise = stage == EmitAction::Fused;
    OwningOpRef<ModuleOp> linalg = module_->clone();
    if (failed(runPasses("kc-linalg-pipeline", *linalg, [&](OpPassManager &pm) {
          buildLinalgPipeline(pm, stageOptions);
        })))
      return 1;
    if (!dump(stage == EmitAction::Linalg ? "03-linalg.mlir" : "04-fused.mlir",
              *linalg))
      return 1;
    if (isLast(stage))
      return finish(moduleText(*linalg));
  }

  // llvm-mlir: what the JIT compiles, by the same function and options.
  OwningOpRef<ModuleOp> lowered = module_->clone();
  if (failed(lowerForCpu(*lowered, config_.cpu, /*cliOptions=*/true)))
    return 1;
  if (!dump("05-llvm.mlir", *lowered))
    return 1;
  if (isLast(EmitAction::LlvmMlir))
    return finish(moduleText(*lowered));
  return emitNative(*lowered, *module_);
}

} // namespace

int driver::runCompile(const CompileConfig &config) {
  DialectRegistry registry;
  registry.insert<kc::KcDialect, func::FuncDialect>();
  registerCodegenInterfaces(registry);
  MLIRContext context(registry);
  context.loadDialect<kc::KcDialect, func::FuncDialect>();
  Compilation compilation(config, context);
  return compilation.run();
}

int driver::inspectTrainStep(LoadedModel &model, const TrainingConfig &training,
                             const std::string &dumpDir, bool fusionReport) {
  CompileConfig config;
  config.emit = dumpDir.empty() ? EmitAction::LlvmMlir : EmitAction::Llvm;
  config.dumpDir = dumpDir;
  config.fusionReport = fusionReport;
  DialectRegistry registry;
  registry.insert<kc::KcDialect, func::FuncDialect>();
  registerCodegenInterfaces(registry);
  MLIRContext context(registry);
  context.loadDialect<kc::KcDialect, func::FuncDialect>();
  Compilation compilation(config, context, model, training);
  return compilation.run();
}
