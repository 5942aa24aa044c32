//===- Compile.h - kcc's compile command ------------------------*- C++ -*-===//
//
// Runs the pipeline up to --emit, stage by stage, writing each stage to
// --dump-dir and the last one to -o:
//
//   kc         import (parse or trace) + kc-import-pipeline      01-kc.mlir
//   train      kc-train-pipeline (loss, autodiff, optimizer)     02-train.mlir
//   linalg     kc-lower-to-linalg (linalg on tensors)            03-linalg.mlir
//   fused      + kc-fuse-elementwise (kc-linalg-pipeline)        04-fused.mlir
//   llvm-mlir  kc-cpu-pipeline (the JIT's pipeline)              05-llvm.mlir
//   llvm       LLVM IR after -O<n> for the target                06-llvm.ll
//   obj, lib   object file / shared library, plus the C header
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_COMPILE_H
#define KCC_TOOLS_KCC_COMPILE_H

#include "ModelLoader.h"
#include "Options.h"

namespace kcc {
namespace driver {

/// Returns the process exit code; diagnostics go to stderr.
int runCompile(const CompileConfig &config);

/// kcc train --dump-dir / --fusion-report: the stages of the step `model`
/// trains with `training` (its batch, optimizer, data parallelism) written
/// to `dumpDir` (01-kc.mlir ... 06-llvm.ll), and its fusion report printed
/// on stdout. Returns the exit code: 0, or 1 after an error message.
int inspectTrainStep(LoadedModel &model, const TrainingConfig &training,
                     const std::string &dumpDir, bool fusionReport);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_COMPILE_H
