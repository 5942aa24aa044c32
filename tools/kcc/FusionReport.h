//===- FusionReport.h - kcc --fusion-report ---------------------*- C++ -*-===//
//
// What kc-cpu-pipeline fused, refused and planned for each function, read
// from the remarks its passes emit (`remarks` option), grouped for a reader.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_FUSIONREPORT_H
#define KCC_TOOLS_KCC_FUSIONREPORT_H

#include "engine/CompiledFunction.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/Support/raw_ostream.h"

namespace kcc {
namespace driver {

/// Runs kc-cpu-pipeline with remarks on a copy of `module` (after
/// kc-build-train-step) and prints the report to `os`.
/// Lowers `module` (a copy) exactly as the JIT does with `cpu`, with the
/// pipeline's remarks on, and prints what was fused, refused and planned.
mlir::LogicalResult printFusionReport(mlir::ModuleOp module,
                                      const CpuOptions &cpu,
                                      llvm::raw_ostream &os);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_FUSIONREPORT_H
