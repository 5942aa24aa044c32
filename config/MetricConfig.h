//===- MetricConfig.h - A Keras metric and its arguments --------*- C++ -*-===//
//
// keras.metrics as plain data: which metric, its constructor arguments
// under their Keras names with Keras 3's defaults, and the instance name it
// logs under. The one-line text form (`AUC(num_thresholds=50,name=auc_1)`)
// is how a metric with arguments travels in TrainingConfig::metrics, in
// `kcc train --metrics` and in kc-build-train-step's options; a bare name
// ("accuracy", "mae", "auc") is the metric with Keras's defaults.
//
// Stateful metrics (Keras's Precision, AUC, F1Score, MeanIoU, R2Score, ...)
// are computed in two parts: each batch's statistics (confusion counts per
// threshold, a confusion matrix, sums of squares), built as IR in the step
// (passes/Metrics.h), summed over the epoch, then the metric's formula on
// the sums (metricResult, here, on the host).
//
// Plain data and LLVM support only (no MLIR), so every layer can link it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CONFIG_METRICCONFIG_H
#define KCC_CONFIG_METRICCONFIG_H

#include "config/LossConfig.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {

enum class MetricKind {
  SparseCategoricalAccuracy,
  CategoricalAccuracy,
  BinaryAccuracy,
  /// Keras's top_k metrics (k, default 5): the target class scores at least
  /// the k-th highest prediction (ties count as hits, as in
  /// keras.ops.in_top_k).
  TopKCategoricalAccuracy,
  SparseTopKCategoricalAccuracy,
  MeanAbsoluteError,
  MeanSquaredError,
  /// Keras's metrics that average a loss function (MeanMetricWrapper):
  /// computed by that loss's IR (passes/Losses.h, metricAsLoss).
  MeanAbsolutePercentageError,
  MeanSquaredLogarithmicError,
  LogCoshError,
  /// +cosine similarity (the loss is its negative).
  CosineSimilarity,
  KLDivergence,
  Poisson,
  Hinge,
  SquaredHinge,
  CategoricalHinge,
  BinaryCrossentropy,
  CategoricalCrossentropy,
  SparseCategoricalCrossentropy,
  /// Keras's correlation metrics: a correlation per example along the last
  /// axis, averaged.
  PearsonCorrelation,
  ConcordanceCorrelation,
  // Stateful metrics (isStateful): statistics per batch, summed, then a
  // formula.
  TruePositives,
  FalsePositives,
  TrueNegatives,
  FalseNegatives,
  Precision,
  Recall,
  AUC,
  PrecisionAtRecall,
  RecallAtPrecision,
  SensitivityAtSpecificity,
  SpecificityAtSensitivity,
  /// F1Score is FBetaScore with beta 1 (and its own default name).
  FBetaScore,
  F1Score,
  /// The IoU family: one confusion matrix, then the mean IoU of some
  /// classes.
  IoU,
  MeanIoU,
  BinaryIoU,
  OneHotIoU,
  OneHotMeanIoU,
  R2Score,
  RootMeanSquaredError,
};

/// k of the top_k metrics: Keras's default.
constexpr int64_t kTopK = 5;

/// Keras's metrics_utils.NEG_INF: the threshold of Precision and Recall
/// with top_k, and the value _filter_top_k gives the other classes.
constexpr double kMetricNegInf = -1e10;

/// The metric's statistics are summed over batches and its value computed
/// from the sums (metricResult), rather than averaged.
bool isStateful(MetricKind kind);

/// The confusion-count family (TruePositives ... SpecificityAtSensitivity
/// and AUC): statistics [tp, fp, tn, fn], each one per threshold (per
/// threshold and label for a multi-label AUC).
bool isConfusionMetric(MetricKind kind);

/// The metric takes class indices as its target (the sparse loss's form).
bool takesClassIndices(MetricKind kind);

/// Keras's class name ("AUC", "MeanIoU", "SparseTopKCategoricalAccuracy").
llvm::StringRef metricClassName(MetricKind kind);
/// The name an instance logs under by default ("auc", "mean_io_u",
/// "f1_score").
llvm::StringRef metricDefaultName(MetricKind kind);

enum class AucCurve { ROC, PR, PRGAIN };
enum class AucSummation { Interpolation, Minoring, Majoring };

/// A metric; defaults are Keras 3's. Each argument is used by the metrics
/// noted; the parser refuses an argument its metric does not take.
struct MetricConfig {
  MetricKind kind = MetricKind::SparseCategoricalAccuracy;
  /// The instance name Keras logs ("auc_1"). Empty: `spelling` for a bare
  /// name, else the class's default name.
  std::string name;
  /// A bare name as the user wrote it ("acc", "mae"): Keras logs compile()
  /// strings as they are written.
  std::string spelling;

  /// Top-k accuracies.
  int64_t k = kTopK;
  /// TruePositives ... Recall, AUC: as given (empty: the default).
  std::vector<double> thresholds;
  /// Precision, Recall.
  std::optional<int64_t> topK;
  /// Precision, Recall, the *At* metrics.
  std::optional<int64_t> classId;
  /// AUC (default 200) and the *At* metrics (200).
  int64_t numThresholds = 200;
  AucCurve curve = AucCurve::ROC;
  AucSummation summation = AucSummation::Interpolation;
  bool multiLabel = false; ///< AUC
  bool fromLogits = false; ///< AUC
  /// AUC: a weight per label (the last axis): each count weighed by its
  /// label's, or with multi_label the labels' AUCs averaged by them. Empty:
  /// every label weighs 1.
  std::vector<double> labelWeights;
  /// The *At* metrics' constraint: recall, precision, specificity or
  /// sensitivity.
  double value = 0.5;
  /// FBetaScore, F1Score: "micro", "macro", "weighted" or unset (a value
  /// per class: listResult()).
  std::optional<std::string> average;
  double beta = 1.0; ///< FBetaScore
  /// FBetaScore, F1Score: unset is each row's maximum; BinaryIoU: 0.5.
  std::optional<double> threshold;
  /// The IoU family (BinaryIoU: 2).
  int64_t numClasses = 0;
  /// IoU, OneHotIoU, BinaryIoU ((0, 1)); the Mean ones: every class.
  std::vector<int64_t> targetClassIds;
  std::optional<int64_t> ignoreClass; ///< the IoU family
  bool sparseYTrue = true;            ///< IoU, MeanIoU
  bool sparseYPred = true;            ///< IoU, MeanIoU (OneHot ones: false)
  /// R2Score: "uniform_average", "variance_weighted_average" or unset (a
  /// value per column: listResult()).
  std::optional<std::string> classAggregation = "uniform_average";
  int64_t numRegressors = 0; ///< R2Score

  /// The name Keras logs it under.
  std::string logName() const;
  bool stateful() const { return isStateful(kind); }
  /// The value is a list, as Keras's result() gives an array: the counts,
  /// Precision and Recall with several thresholds (one per threshold),
  /// FBetaScore/F1Score with average=None (one per class), R2Score with
  /// class_aggregation=None (one per column).
  bool listResult() const;

  /// The thresholds the confusion statistics compare predictions against
  /// (Keras's, AUC's with its -epsilon and 1 + epsilon ends), in order.
  std::vector<double> resolvedThresholds() const;
  /// Keras counts with its bucketed method (is_evenly_distributed_thresholds):
  /// `clip(pred, 0, 1) * (n - 1) > i` for threshold i of n.
  bool thresholdsEvenlyDistributed() const;
  /// Evenly distributed with AUC's epsilon ends: the first threshold takes
  /// every prediction.
  bool thresholdsWithEpsilon() const;
  /// The classes the IoU family averages over.
  std::vector<int64_t> resolvedTargetClassIds() const;

  /// The one-line text form: the bare name when every argument has its
  /// default, else `Class(key=value,...)` with Keras's argument names
  /// (lists as `[0.3,0.7]`, strings bare), only arguments that differ from
  /// the defaults, `name=` last.
  std::string str() const;
  /// The built-in metrics by name, each followed by ", ": "accuracy, acc, "
  /// first when `withAccuracy`, then the function names and the stateful
  /// classes (what --metrics and the unknown-metric error list).
  static std::string knownNames(bool withAccuracy);
  /// Parses str()'s form, or any name keras.metrics.get accepts, resolving
  /// "accuracy"/"acc" against `loss` as compile() does. Arguments are those
  /// of the class; an unknown one is an error listing those it takes.
  static llvm::Expected<MetricConfig> parse(llvm::StringRef text,
                                            LossKind loss);

  /// Sets the argument `key` (Keras's name) from its text.
  llvm::Error setArgument(llvm::StringRef key, llvm::StringRef value);
  /// The Keras names of the arguments `kind` takes, name last.
  static std::vector<llvm::StringRef> argumentNames(MetricKind kind);

  /// Keras's constructor checks, the message naming the argument.
  llvm::Error validate() const;
};

/// The metric of a Keras class name ("AUC", "MeanSquaredError"), if kcc
/// has it.
std::optional<MetricKind> metricKindOfClass(llvm::StringRef className);

/// The TrainingConfig::metrics entry of a Keras metric object
/// ({"class_name": CLASS, "config": {...}} as compile_config records it):
/// `Class(key=value,...,name=NAME)` with the arguments that differ from the
/// defaults, or a bare name when none does (the instance name for a mean
/// metric, as Keras logs it). Fails on an argument kcc does not support.
llvm::Expected<std::string> metricFromKeras(llvm::StringRef className,
                                            const llvm::json::Object *config);

/// The value of a stateful metric from its statistics summed over batches
/// (the layout passes/Metrics.h documents), as Keras's result() computes it
/// (in double; Keras's comparisons against `value` in float, as Keras):
/// one element, or the list of a listResult() metric.
std::vector<double> metricValues(const MetricConfig &metric,
                                 llvm::ArrayRef<double> stats);
/// metricValues as one number: a list's mean (what Keras's progress bar
/// shows for it).
double metricResult(const MetricConfig &metric, llvm::ArrayRef<double> stats);

} // namespace kcc

#endif // KCC_CONFIG_METRICCONFIG_H
