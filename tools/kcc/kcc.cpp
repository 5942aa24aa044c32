//===- kcc.cpp - The kcc compiler driver ----------------------------------===//
//
// kcc reads a model — a .mlir file of kc ops, a Keras spec (.json, .keras,
// .h5) or one of the reference models (--model=) — verifies it, runs the
// pipeline up to the stage named by --emit and prints that stage. --emit is
// ordered as in Toy's toyc: each action lowers further than the one before.
//
//===----------------------------------------------------------------------===//

#include "examples/models/ReferenceModels.h"
#include "frontend/Model.h"
#include "frontend/Trace.h"
#include "frontend/keras/KerasImporter.h"
#include "ir/KcDialect.h"
#include "passes/Passes.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum EmitAction { EmitKc };

cl::OptionCategory kccCategory("kcc options");
cl::opt<std::string> inputFilename(cl::Positional,
                                   cl::desc("<input .mlir | .json | .keras | .h5>"),
                                   cl::init("-"), cl::cat(kccCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(kccCategory));
cl::opt<EmitAction> emitAction(
    "emit", cl::desc("How far to lower"), cl::init(EmitKc),
    cl::values(clEnumValN(EmitKc, "kc", "the verified, canonicalized kc IR")),
    cl::cat(kccCategory));
cl::opt<std::string> modelName(
    "model", cl::desc("Trace a reference model instead of reading a file"),
    cl::value_desc("mlp|cnn|residual"), cl::cat(kccCategory));
cl::opt<int64_t> batchSize("batch",
                           cl::desc("Static batch size of traced models"),
                           cl::init(32), cl::cat(kccCategory));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the initial weights"),
                       cl::init(0), cl::cat(kccCategory));

void printVersion(llvm::raw_ostream &os) {
  os << "kcc " KCC_VERSION " (MLIR/LLVM " LLVM_VERSION_STRING ")\n";
}

/// Builds the model named by --model or read from a Keras spec.
std::unique_ptr<kcc::Model> loadModel() {
  if (modelName == "mlp")
    return kcc::examples::buildMlp(seed);
  if (modelName == "cnn")
    return kcc::examples::buildCnn(seed);
  if (modelName == "residual")
    return kcc::examples::buildResidual(seed);
  if (!modelName.empty())
    throw kcc::Error("unknown --model '" + modelName +
                     "' (expected mlp, cnn or residual)");
  return kcc::keras::importFile(inputFilename, seed).model;
}

/// Reads the input: traced from a model, or parsed from .mlir.
OwningOpRef<ModuleOp> loadModule(MLIRContext &context,
                                 llvm::SourceMgr &sourceMgr) {
  llvm::StringRef path(inputFilename);
  if (!modelName.empty() || path.ends_with(".json") ||
      path.ends_with(".keras") || path.ends_with(".h5")) {
    std::unique_ptr<kcc::Model> model = loadModel();
    kcc::TraceOptions options;
    options.batch = batchSize;
    return kcc::traceForward(context, *model, options);
  }
  std::string error;
  auto input = openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "kcc: error: " << error << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, &context);
}

int run() {
  DialectRegistry registry;
  registry.insert<kcc::kc::KcDialect, func::FuncDialect>();
  MLIRContext context(registry);
  kcc::registerFrontendDialects(context);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = loadModule(context, sourceMgr);
  if (!module)
    return 1;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  kcc::buildImportPipeline(pm);
  if (failed(pm.run(*module)))
    return 1;

  // Written to a temporary and renamed on keep(): no half-written output.
  std::string error;
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "kcc: error: " << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->keep();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // MLIR's own options (--mlir-print-ir-after-all, --mlir-timing, ...).
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(argc, argv,
                              "kcc: compiles Keras-style training steps\n");
  try {
    return run();
  } catch (const kcc::Error &e) {
    // Model and spec errors name the file, the JSON path and the layer.
    llvm::errs() << "kcc: error: " << e.what() << "\n";
    return 1;
  }
}
