//===- Jit.h - kcc::jit: a model's training step as an Executable -*- C++ -*-===//
//
// The embedding API: trace a model, build its @train_step (loss, autodiff,
// optimizer) and bind its weights in one call, compiled or interpreted.
//
//   auto exe = kcc::jit(model, {.batch = 64, .optimizer = "adam",
//                               .loss = "sparse_categorical_crossentropy",
//                               .metrics = {"accuracy"},
//                               .mode = kcc::ExecMode::Compiled});
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

#include "frontend/Model.h"
#include "engine/Executable.h"

#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kcc {

/// kcc::jit's options: the first five in the order a call names them.
struct JitOptions {
  int64_t batch = 32;
  std::string optimizer = "adam";
  std::string loss = "sparse_categorical_crossentropy";
  std::vector<std::string> metrics;
  ExecMode mode = ExecMode::Compiled;
  bool fromLogits = false;
  /// Unset: Keras's default for the optimizer (sgd 0.01, else 0.001).
  std::optional<double> learningRate;
  double momentum = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-7, rho = 0.9;
  CpuOptions cpu;
  /// Where compiles are reported; null is silent.
  llvm::raw_ostream *log = &llvm::errs();
};

/// Throws kcc::Error on an unknown loss, optimizer or metric (naming it).
void validateJitOptions(const JitOptions &options);

/// Traces `model` at `options.batch` and runs the train pipeline: a module
/// with @train_step and the inference @forward. Throws kcc::Error with the
/// pipeline's diagnostics on failure.
mlir::OwningOpRef<mlir::ModuleOp> buildTrainModule(mlir::MLIRContext &ctx,
                                                   Model &model,
                                                   const JitOptions &options);

/// The training step of `model` bound to its current weights.
Executable jit(Model &model, const JitOptions &options = {});

/// An inference-only Executable (@forward at `batch`): predict() only.
Executable jitInference(Model &model, int64_t batch,
                        ExecMode mode = ExecMode::Compiled,
                        llvm::raw_ostream *log = &llvm::errs());

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_JIT_H
