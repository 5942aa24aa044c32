//===- Jit.h - kcc::jit: a model's training step as an Executable -*- C++
//-*-===//
//
// The embedding API: trace a model, build its @train_step (loss, autodiff,
// optimizer) and bind its weights in one call, compiled or interpreted.
//
//   kcc::TrainingConfig config;            // Keras 3's defaults: adam,
//   config.batch = 64;                     // sparse_categorical_crossentropy
//   config.metrics = {"accuracy"};
//   auto exe = kcc::jit(model, config);    // compiled (config.mode)
//   kcc::StepResult r = exe.step(x, y);   // r.loss, r.metrics[0]
//   kcc::NDArray probs = exe.predict(images);
//   model.setWeights(exe.getWeights());
//
// The @forward of the module is the inference trace (Dropout off), so
// predict() is Keras's predict(). Compiles go through the process-wide
// CompileCache: the same model at the same batch compiles once.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_JIT_H
#define KCC_FRONTEND_TRAINING_JIT_H

#include "config/TrainingConfig.h"
#include "engine/Executable.h"
#include "frontend/Model.h"
#include "frontend/training/CompileOptions.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kcc {

/// How kcc::jit runs a step; what the step is comes from a TrainingConfig.
struct JitOptions {
  /// Code generation for the host CPU (compiled mode).
  CpuOptions cpu;
  /// Where compiles are reported; null is silent.
  llvm::raw_ostream *log = &llvm::errs();
};

/// Throws kcc::Error ("compile: <what is wrong>", as Keras's compile()
/// would) unless `config` is valid (TrainingConfig::validate).
void checkTrainingConfig(const TrainingConfig &config);

/// The runtime's options for a step built from `config`: its mode, its
/// initial learning rate (OptimizerConfig::resolvedLearningRate), `options`'
/// CPU target and log.
ExecOptions execOptions(const TrainingConfig &config,
                        const JitOptions &options = {});

/// Traces `model` at `config.batch` (and the custom losses and metrics it
/// names) and runs the train pipeline: a module with @train_step and the
/// inference @forward. Throws kcc::Error on an invalid config
/// (TrainingConfig::validate) and with the pipeline's diagnostics on
/// failure.
mlir::OwningOpRef<mlir::ModuleOp>
buildTrainModule(mlir::MLIRContext &ctx, Model &model,
                 const CompileOptions &options);

/// The training step of `model` bound to its current weights.
Executable jit(Model &model, const CompileOptions &compile,
               const JitOptions &options = {});

/// An inference-only Executable (@forward at `batch`): predict() only.
/// With `outputMasks`, predict() returns the Keras mask of each masked
/// output after the predictions (TraceOptions::outputMasks).
Executable jitInference(Model &model, int64_t batch,
                        ExecMode mode = ExecMode::Compiled,
                        llvm::raw_ostream *log = &llvm::errs(),
                        bool outputMasks = false);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_JIT_H
