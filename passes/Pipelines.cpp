//===- Pipelines.cpp - Named kc pipelines ---------------------------------===//

#include "passes/Passes.h"
#include "ir/KcDialect.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace kcc {

namespace {
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"
} // namespace

void buildImportPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerPasses() {
  registerKcPasses();
  mlir::PassPipelineRegistration<>(
      "kc-import-pipeline",
      "Canonicalize and CSE a traced or imported kc module",
      buildImportPipeline);
}

} // namespace kcc
