//===- kcc.cpp - The kcc compiler driver ----------------------------------===//
//
// kcc reads a model (a .mlir file of kc ops for now), verifies it, runs the
// pipeline up to the stage named by --emit and prints that stage.
// --emit is ordered as in Toy's toyc: each action lowers further than the
// one before it.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum EmitAction { EmitKc };

cl::OptionCategory kccCategory("kcc options");
cl::opt<std::string> inputFilename(cl::Positional, cl::desc("<input .mlir>"),
                                   cl::init("-"), cl::cat(kccCategory));
cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                    cl::value_desc("filename"), cl::init("-"),
                                    cl::cat(kccCategory));
cl::opt<EmitAction> emitAction(
    "emit", cl::desc("How far to lower"), cl::init(EmitKc),
    cl::values(clEnumValN(EmitKc, "kc", "the verified, canonicalized kc IR")),
    cl::cat(kccCategory));

void printVersion(llvm::raw_ostream &os) {
  os << "kcc " KCC_VERSION " (MLIR/LLVM " LLVM_VERSION_STRING ")\n";
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

  DialectRegistry registry;
  registry.insert<kcc::kc::KcDialect, func::FuncDialect>();
  MLIRContext context(registry);

  std::string error;
  auto input = openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << "kcc: error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  kcc::buildImportPipeline(pm);
  if (failed(pm.run(*module)))
    return 1;

  // Written to a temporary and renamed on keep(): no half-written output.
  auto output = openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << "kcc: error: " << error << "\n";
    return 1;
  }
  module->print(output->os());
  output->keep();
  return 0;
}
