//===- kcc-opt.cpp - mlir-opt with the kc dialect and kcc's passes --------===//
//
// Runs any kcc pass or named pipeline on .mlir input, exactly as the kcc
// driver runs them; the tool behind the lit tests. The input is read and
// checked as kcc reads it (tools/input/MlirInput.h) before the parser sees
// it.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcDialect.h"
#include "passes/Passes.h"
#include "tools/input/MlirInput.h"
#ifdef KCC_HAVE_CUDA_CODEGEN
#include "codegen/cuda/CudaPasses.h"
#endif

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  kcc::registerPasses();
  kcc::registerCodegenPasses();
#ifdef KCC_HAVE_CUDA_CODEGEN
  kcc::registerCudaCodegenPasses();
#endif

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  registry.insert<kcc::kc::KcDialect>();
  kcc::registerCodegenInterfaces(registry);
#ifdef KCC_HAVE_CUDA_CODEGEN
  kcc::registerCudaCodegenInterfaces(registry);
#endif

  llvm::InitLLVM init(argc, argv);
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "kcc optimizer driver\n", registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      kcc::tools::readMlirInput(inputFile, error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  // Checked in a SourceMgr of its own, so the error has line and column.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(input->getBuffer(),
                                       input->getBufferIdentifier()),
      llvm::SMLoc());
  if (!kcc::tools::checkMlirNesting(sourceMgr, 1))
    return 1;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
