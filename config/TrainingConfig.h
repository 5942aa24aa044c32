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

#ifndef KCC_CONFIG_TRAININGCONFIG_H
#define KCC_CONFIG_TRAININGCONFIG_H

#include "config/LossConfig.h"
#include "config/MetricConfig.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kcc {

enum class OptimizerKind {
  SGD,
  Adam,
  RMSprop,
  AdamW,
  Adagrad,
  Nadam,
  Adamax,
  Lion,
};

/// keras.optimizers.schedules, by class.
enum class ScheduleKind {
  ExponentialDecay,
  PiecewiseConstantDecay,
  InverseTimeDecay,
  PolynomialDecay,
  CosineDecay,
  CosineDecayRestarts,
};

/// How a step runs: JIT-compiled, or op by op by the interpreter.
enum class ExecMode { Compiled, Interpreted };

/// "sgd", "adam", "rmsprop", "adamw", "adagrad", "nadam", "adamax", "lion",
/// in any case (Keras's class names work too).
llvm::Expected<OptimizerKind> parseOptimizer(llvm::StringRef name);
llvm::StringRef optimizerName(OptimizerKind kind);

/// Keras's class name ("ExponentialDecay"), or its snake_case form.
llvm::Expected<ScheduleKind> parseScheduleKind(llvm::StringRef name);
/// Keras's class name.
llvm::StringRef scheduleName(ScheduleKind kind);

/// Resolves a metric name (or MetricConfig::str()'s form with arguments)
/// against the loss: "accuracy"/"acc" picks the accuracy matching it, as
/// Keras's compile() does. A metric whose target the loss does not take (a
/// sparse one without a sparse loss, mae/mse or a one-hot one with it) is an
/// error. MetricConfig::parse gives the arguments too.
llvm::Expected<MetricKind> parseMetric(llvm::StringRef name, LossKind loss);

/// "compiled" or "interpreted".
llvm::Expected<ExecMode> parseExecMode(llvm::StringRef name);
const char *execModeName(ExecMode mode);

/// A keras.optimizers.schedules object: the learning rate as a function of
/// the optimizer's iteration count, computed inside @train_step (so it never
/// recompiles). Fields hold Keras's constructor arguments under their
/// Keras names; each is used by the kinds noted, defaults are Keras 3's.
struct LearningRateSchedule {
  ScheduleKind kind = ScheduleKind::ExponentialDecay;
  /// All kinds but PiecewiseConstantDecay.
  double initialLearningRate = 0.001;
  /// Exponential, InverseTime, Polynomial, Cosine; CosineDecayRestarts's
  /// `first_decay_steps`. Must be > 0.
  double decaySteps = 1;
  double decayRate = 0.5;             ///< Exponential, InverseTime
  bool staircase = false;             ///< Exponential, InverseTime
  std::vector<double> boundaries;     ///< PiecewiseConstant (steps)
  std::vector<double> values;         ///< PiecewiseConstant (one more)
  double endLearningRate = 0.0001;    ///< Polynomial
  double power = 1.0;                 ///< Polynomial
  bool cycle = false;                 ///< Polynomial
  double alpha = 0.0;                 ///< Cosine, CosineDecayRestarts
  std::optional<double> warmupTarget; ///< Cosine; unset: no warmup
  double warmupSteps = 0;             ///< Cosine
  double tMul = 2.0;                  ///< CosineDecayRestarts
  double mMul = 1.0;                  ///< CosineDecayRestarts

  /// The rate at iteration 0 (what the first step uses).
  double initialValue() const;

  /// The one-line text form, e.g.
  /// `ExponentialDecay(initial_learning_rate=0.1,decay_steps=3,
  /// decay_rate=0.5,staircase=false)` (no spaces; lists as `[1,3]`): how
  /// the schedule travels in kc-build-train-step's `lr-schedule` option and
  /// in `kcc train --lr-schedule`. Only the fields of `kind` are written.
  std::string str() const;
  /// Parses str()'s form; a missing key keeps its default, an unknown key
  /// or a key of another kind is an error naming it.
  static llvm::Expected<LearningRateSchedule> parse(llvm::StringRef text);

  /// Keras's constructor checks (decay_steps > 0, one value more than
  /// boundaries, ...), the message naming the field.
  llvm::Error validate() const;
};

/// An optimizer and its hyper-parameters; defaults are Keras 3's. Fields
/// are used by the optimizers noted; clipping and weight decay by all.
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::Adam;
  /// Unset: Keras's default for `kind` (see resolvedLearningRate). Ignored
  /// when `schedule` is set.
  std::optional<double> learningRate;
  /// The learning rate follows this schedule of the iteration count.
  std::optional<LearningRateSchedule> schedule;
  double momentum = 0.0; ///< sgd, rmsprop; 0 = no momentum slot
  bool nesterov = false; ///< sgd
  double beta1 = 0.9;    ///< adam, adamw, nadam, adamax, lion
  /// Unset: Keras's default for `kind` (see resolvedBeta2).
  std::optional<double> beta2; ///< adam, adamw, nadam, adamax, lion
  double epsilon = 1e-7;       ///< adam, adamw, rmsprop, adagrad, nadam, adamax
  bool amsgrad = false;        ///< adam, adamw: a velocity_hat slot
  double rho = 0.9;            ///< rmsprop
  bool centered = false;       ///< rmsprop: an average_gradient slot
  double initialAccumulatorValue = 0.1; ///< adagrad
  /// Decoupled weight decay `w -= w * wd * lr` before the update (Keras's
  /// BaseOptimizer._apply_weight_decay). Unset: Keras's default for `kind`
  /// (adamw 0.004, none otherwise; see resolvedWeightDecay).
  std::optional<double> weightDecay;
  /// Gradient clipping, at most one of the three; 0 is off, as in Keras
  /// (which tests them for truth). clipnorm: each gradient to this L2 norm;
  /// clipvalue: each element to [-v, v]; globalClipnorm: all gradients
  /// together to this global norm.
  double clipnorm = 0.0;
  double clipvalue = 0.0;
  double globalClipnorm = 0.0;

  /// The learning rate the first step uses: the schedule's at iteration 0,
  /// else the one given, else Keras 3's default (sgd 0.01, the others
  /// 0.001).
  double resolvedLearningRate() const;
  /// beta_2 given, else Keras's default (lion 0.99, the others 0.999).
  double resolvedBeta2() const;
  /// weight_decay given, else Keras's default (adamw 0.004, else 0 = none).
  double resolvedWeightDecay() const;
};

/// The name Keras logs a metric under: a registered custom object's own
/// name without its package ("MyPackage>my_metric" logs "my_metric"), a
/// metric with arguments its `name=` or its class's default name
/// ("AUC(num_thresholds=50,name=auc_1)" logs "auc_1", "Precision" logs
/// "precision"), other names as they are.
llvm::StringRef metricLogName(llvm::StringRef name);

/// The training of one output of a model with several (Keras's per-output
/// compile arguments: loss, loss_weights and metrics by output name).
struct OutputTraining {
  /// The output layer's name: Keras's log prefix ("class" logs
  /// "class_loss", "class_accuracy").
  std::string name;
  LossConfig loss;
  /// Keras's loss_weights entry: the total loss is sum(weight * loss).
  double lossWeight = 1.0;
  /// As the user named them; logged as "<name>_<metric>".
  std::vector<std::string> metrics;

  /// The one-line form kc-build-train-step's `outputs` option carries:
  /// `NAME:LOSS:WEIGHT:FROM_LOGITS[:METRIC...]` with LOSS in
  /// LossConfig::str()'s form, e.g.
  /// `class:sparse_categorical_crossentropy:1:0:accuracy` or
  /// `box:huber(delta=2):0.5:0`.
  std::string str() const;
  static llvm::Expected<OutputTraining> parse(llvm::StringRef text);
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
  /// A model with several outputs: one entry per output, in the model's
  /// output order; `loss` and `metrics` are then unused. Empty: the model
  /// has one output, trained with `loss` and `metrics`.
  std::vector<OutputTraining> outputs;
  OptimizerConfig optimizer;
  /// The static batch of the traced step.
  int64_t batch = 32;
  /// Keras's global dtype policy, applied to every layer before the step is
  /// traced ("float32" or "mixed_bfloat16"); empty keeps each layer's own.
  std::string dtypePolicy;
  ExecMode mode = ExecMode::Compiled;
  /// The step takes per-example weights ([batch] f32 after the target) and
  /// reduces the loss and metrics with them as Keras does. Off, the step is
  /// the unweighted one.
  bool sampleWeight = false;
  /// Keras's class_weight: class -> weight, applied on the host as
  /// per-example weights (an absent class weighs 1). Non-empty implies a
  /// weighted step.
  std::map<int64_t, double> classWeight;
  /// Keras's custom_objects: the names of the losses and metrics written
  /// in C++ (kcc::CompileOptions) that the module defines as functions. A
  /// loss's `custom` and a metric of `metrics` (or an output's) may name
  /// one; any other custom name is an error saying how to supply it.
  std::vector<std::string> customObjects;
  /// The step averages its gradients over the ranks of an MPI job
  /// (kc.all_reduce) before the optimizer: each rank then trains on its own
  /// `batch` examples and all apply the same update.
  bool dataParallel = false;
  /// Data-parallel: the gradients are packed, in the order the backward
  /// produces them, into buckets of at most this many bytes (a larger
  /// gradient is a bucket of its own); each bucket's all-reduce starts once
  /// its last gradient exists and overlaps the rest of the backward.
  int64_t bucketBytes = int64_t(1) << 20;

  bool isCustomObject(llvm::StringRef name) const;

  /// The names of the step's scalar results after the total loss, in order
  /// (Executable::metricNames), as Keras logs them (metricLogName):
  /// `metrics`, or with several outputs each
  /// output's "<name>_loss", then each output's "<name>_<metric>", as
  /// Keras 3 logs them.
  std::vector<std::string> resultNames() const;

  /// Checks what the types cannot: metrics resolve against the loss, the
  /// batch is positive, hyper-parameters are finite and in range. The
  /// message names the offending field.
  llvm::Error validate() const;
};

/// Parses class weights as a JSON object (`{"0": 1, "1": 5}`) or as
/// `0:1,1:5`. Classes are non-negative integers given once, weights finite
/// and non-negative; the message says what is wrong and where.
llvm::Expected<std::map<int64_t, double>>
parseClassWeight(llvm::StringRef text);

} // namespace kcc

#endif // KCC_CONFIG_TRAININGCONFIG_H
