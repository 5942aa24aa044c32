//===- TrainStep.h - The @train_step contract and its pipeline --*- C++ -*-===//
//
// kc-build-train-step produces
//
//   @train_step(params..., opt_state..., %iterations: tensor<i64>,
//               %lr: tensor<f32>, inputs..., targets...[, %sample_weight])
//     -> (loss, metrics..., new params..., new opt_state..., new iterations)
//
// One target per @forward result. With several outputs the loss is Keras's
// total, sum(loss_weight * output loss), and the "metrics" are each output's
// loss, then each output's metrics, named as Keras logs them ("class_loss",
// "class_accuracy"; TrainingConfig::resultNames).
//
// %sample_weight (f32[batch], `sample_weight = true` in the layout) is there
// only when the step was built with sample-weight: the loss and the metrics
// are then Keras's weighted reductions.
//
// The optimizer state is param-major (each trainable param's slots), then
// the optimizer-wide slots (Optimizers.h). With a learning-rate schedule the
// step computes its rate from %iterations and ignores %lr, which then holds
// the schedule's initial rate.
//
// TrainStepLayout reads the counts back from the function's
// `kc.train_step` attribute so runtimes (the interpreter-driven Trainer, the
// compiled executable) bind values by position without re-deriving them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_TRAINSTEP_H
#define KCC_PASSES_TRAINSTEP_H

#include "config/TrainingConfig.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace kcc {

struct TrainStepLayout {
  unsigned numParams = 0;
  unsigned numOptimizerState = 0;
  unsigned numInputs = 0;
  /// One target per output of @forward.
  unsigned numTargets = 1;
  /// The results after the loss, by name: scalars, or a stateful metric's
  /// statistics (a rank-1 tensor).
  std::vector<std::string> metrics;
  /// Per entry of `metrics`: the stateful metric (MetricConfig::str()) whose
  /// statistics the result holds, or empty for a scalar (a batch mean).
  std::vector<std::string> statistics;
  std::string loss, optimizer;
  /// The learning-rate schedule the step computes from %iterations
  /// (LearningRateSchedule::str()); empty when the step uses %lr.
  std::string schedule;
  /// The value each optimizer state tensor starts at (numOptimizerState
  /// entries; Adagrad's accumulator 0.1, Nadam's u_product 1, else 0).
  std::vector<double> stateInit;
  /// The step takes per-example weights after the target.
  bool sampleWeight = false;

  // Argument positions.
  unsigned firstParamArg() const { return 0; }
  unsigned firstStateArg() const { return numParams; }
  unsigned iterationsArg() const { return numParams + numOptimizerState; }
  unsigned learningRateArg() const { return iterationsArg() + 1; }
  unsigned firstInputArg() const { return iterationsArg() + 2; }
  /// The first target (the only one of a single-output model).
  unsigned targetArg() const { return firstInputArg() + numInputs; }
  /// Valid only with sampleWeight.
  unsigned sampleWeightArg() const { return targetArg() + numTargets; }
  unsigned numArgs() const {
    return targetArg() + numTargets + (sampleWeight ? 1 : 0);
  }
  // Result positions.
  unsigned lossResult() const { return 0; }
  unsigned firstMetricResult() const { return 1; }
  unsigned firstParamResult() const { return 1 + metrics.size(); }
  unsigned firstStateResult() const { return firstParamResult() + numParams; }
  unsigned iterationsResult() const {
    return firstStateResult() + numOptimizerState;
  }
};

/// The function of the module that computes custom object `name` (a loss
/// or a metric written in C++, TrainingConfig::customObjects) for output
/// `output`: `(y_true, y_pred) -> values`, values [batch, ...] (or one
/// scalar). kc-build-train-step inlines it into the step, reduces the
/// values as Keras does (a loss: the weighted sum_over_batch_size; a
/// metric: the mean) and erases it.
std::string customFunctionSymbol(llvm::StringRef name, unsigned output);

/// The layout of a function built by kc-build-train-step; std::nullopt when
/// `f` lacks a well-formed `kc.train_step` attribute.
std::optional<TrainStepLayout> getTrainStepLayout(mlir::func::FuncOp f);

/// kc-build-train-step's options for `config`: the one place a
/// TrainingConfig becomes pass options. The result views `config.metrics`,
/// so `config` must outlive it. How the step runs (batch, mode, learning
/// rate) is not the pass's concern and is left out.
KcBuildTrainStepOptions toTrainStepOptions(const TrainingConfig &config);
/// The same for any config: the `outputs` option views `outputStorage`
/// (OutputTraining::str() of each output), which must outlive the result.
KcBuildTrainStepOptions
toTrainStepOptions(const TrainingConfig &config,
                   std::vector<std::string> &outputStorage);

/// The TrainingConfig kc-build-train-step's options describe, names parsed
/// and values validated (TrainingConfig::validate).
llvm::Expected<TrainingConfig>
fromTrainStepOptions(const KcBuildTrainStepOptions &options);

/// The training pipeline on a traced @forward: import clean-up, the train
/// step, then canonicalize + CSE once more (the update math repeats splat
/// constants per parameter, and the reverse sweep leaves dead values).
void buildTrainPipeline(mlir::OpPassManager &pm,
                        const TrainingConfig &config = {});

} // namespace kcc

#endif // KCC_PASSES_TRAINSTEP_H
