//===- Passes.h - kc-level passes and named pipelines -----------*- C++ -*-===//

#ifndef KCC_PASSES_PASSES_H
#define KCC_PASSES_PASSES_H

#include "config/TrainingConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace kcc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The import pipeline: what runs on a freshly traced or imported @forward
/// before anything else (canonicalize, CSE), so later stages see small IR.
void buildImportPipeline(mlir::OpPassManager &pm);

/// Registers every kc pass and named pipeline (kcc-opt and kcc both call it,
/// so they run the same thing).
void registerPasses();

} // namespace kcc

#endif // KCC_PASSES_PASSES_H
