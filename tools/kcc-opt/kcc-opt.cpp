//===- kcc-opt.cpp - mlir-opt with the kc dialect and kcc's passes --------===//
//
// Runs any kcc pass or named pipeline on .mlir input, exactly as the kcc
// driver runs them; the tool behind the lit tests.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcDialect.h"
#include "passes/Passes.h"
#ifdef KCC_HAVE_CUDA_CODEGEN
#include "codegen/cuda/CudaPasses.h"
#endif

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

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
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "kcc optimizer driver\n", registry));
}
