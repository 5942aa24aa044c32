//===- TrainingConfig.h - What a training step is built from ----*- C++ -*-===//
//
// The one description of a training configuration: the loss, the metrics,
// the optimizer and its hyper-parameters, the batch and how the step runs.
// The Keras importer fills it from a spec's compile_config, the kcc command
// line applies its flags on top, kcc::jit and kcc::Trainer take it, and
// kc-build-train-step reads it back from its pass options. Names are parsed
// here, once per family, and Keras's defaults are written here, once.
//
// Plain data and LLVM support only (no MLIR), so every layer can link it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_TRAININGCONFIG_H
#define KCC_PASSES_TRAININGCONFIG_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {

enum class LossKind {
  SparseCategoricalCrossentropy,
  CategoricalCrossentropy,
  BinaryCrossentropy,
  MeanSquaredError,
};

enum class MetricKind {
  SparseCategoricalAccuracy,
  CategoricalAccuracy,
  BinaryAccuracy,
};

enum class OptimizerKind { SGD, Adam, RMSprop };

/// How a step runs: JIT-compiled, or op by op by the interpreter.
enum class ExecMode { Compiled, Interpreted };

/// "sparse_categorical_crossentropy" etc., or Keras's short alias "mse".
llvm::Expected<LossKind> parseLoss(llvm::StringRef name);
llvm::StringRef lossName(LossKind kind);

/// "sgd", "adam", "rmsprop", in any case (Keras's class names work too).
llvm::Expected<OptimizerKind> parseOptimizer(llvm::StringRef name);
llvm::StringRef optimizerName(OptimizerKind kind);

/// Resolves a metric name against the loss: "accuracy"/"acc" picks the
/// accuracy matching it, as Keras's compile() does.
llvm::Expected<MetricKind> parseMetric(llvm::StringRef name, LossKind loss);

/// "compiled" or "interpreted".
llvm::Expected<ExecMode> parseExecMode(llvm::StringRef name);
const char *execModeName(ExecMode mode);

/// An optimizer and its hyper-parameters; defaults are Keras 3's.
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  /// Unset: Keras's default for `kind` (see resolvedLearningRate).
  std::optional<double> learningRate;
  double momentum = 0.0; ///< sgd, rmsprop; 0 = no momentum slot
  bool nesterov = false; ///< sgd
  double beta1 = 0.9;    ///< adam
  double beta2 = 0.999;  ///< adam
  double epsilon = 1e-7; ///< adam, rmsprop
  double rho = 0.9;      ///< rmsprop

  /// The learning rate the first step uses: the one given, else Keras 3's
  /// default (sgd 0.01, adam and rmsprop 0.001).
  double resolvedLearningRate() const;
};

/// A loss; defaults are Keras 3's.
struct LossConfig {
  LossKind kind = LossKind::SparseCategoricalCrossentropy;
  /// The prediction is logits rather than probabilities.
  bool fromLogits = false;
};

/// Everything a training step is built and run from.
///
/// Later features extend this struct rather than adding parallel ones:
/// losses and loss weights per output (LossConfig per output), learning-rate
/// schedules (in OptimizerConfig), callbacks and data parallelism (here,
/// next to `batch` and `mode`).
struct TrainingConfig {
  LossConfig loss;
  /// As the user named them ("accuracy", "acc", ...): Keras's log names.
  std::vector<std::string> metrics;
  OptimizerConfig optimizer;
  /// The static batch of the traced step.
  int64_t batch = 32;
  ExecMode mode = ExecMode::Compiled;

  /// Checks what the types cannot: metrics resolve against the loss, the
  /// batch is positive, hyper-parameters are finite and in range. The
  /// message names the offending field.
  llvm::Error validate() const;
};

} // namespace kcc

#endif // KCC_PASSES_TRAININGCONFIG_H
