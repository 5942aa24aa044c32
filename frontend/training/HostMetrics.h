//===- HostMetrics.h - Loss and metrics from predictions --------*- C++ -*-===//
//
// evaluate() and fit()'s validation compute the loss and the metrics of
// TrainingConfig on the host from the inference @forward's predictions: the
// loss by running the step's own loss IR (HostLoss), the metrics with the
// formulas of passes/Losses.cpp (Keras's 0.5 thresholds, top-k ties),
// accumulated over batches as Keras's evaluate() does: the loss the mean of
// the batch losses weighed by their example counts, each metric the mean
// over every example (every element for the elementwise ones), however the
// batches split them. Custom losses and metrics (CompileOptions) run
// eagerly on the predictions, reduced as the step reduces them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_HOSTMETRICS_H
#define KCC_FRONTEND_TRAINING_HOSTMETRICS_H

#include "config/TrainingConfig.h"
#include "frontend/training/Callbacks.h"
#include "frontend/training/CompileOptions.h"
#include "frontend/training/HostLoss.h"
#include "runtime/NDArray.h"

#include <memory>
#include <string>
#include <vector>

namespace kcc {

class MetricAccumulator {
public:
  /// Throws kcc::Error naming a metric it cannot compute. `config` is
  /// resolved (CompileOptions::resolvedConfig); `custom` holds the custom
  /// objects it names.
  explicit MetricAccumulator(const TrainingConfig &config,
                             const CustomObjects *custom = nullptr);
  /// Adds a batch: `pred` [n, ...] as @forward returns it, `target` as the
  /// step takes it (labels [n, ...] for sparse losses, else pred's shape).
  /// With per-example weights `sampleWeight` ([n]) the loss is Keras's
  /// weighted one, sum(w_i * loss_i) / n over all examples; the metrics stay
  /// unweighted, as Keras's compile() metrics are. With the prediction's
  /// Keras `mask` (0/1, pred's shape without its last axis) the loss is the
  /// masked one of the batch and each metric a mean over the real steps of
  /// every batch so far, as Keras's MeanMetricWrapper accumulates it.
  void add(const NDArray &pred, const NDArray &target,
           const NDArray &sampleWeight = NDArray(),
           const NDArray &mask = NDArray());
  /// "loss" and each metric by the name the config gives it.
  Logs result() const;

private:
  /// Throws unless the loss and every metric can take a Keras mask.
  void checkMaskable() const;
  /// Adds the values of `object` on a batch of `examples` to `sum` and
  /// `count`, each weighed by its example's weight when `weights` is given.
  static void addCustom(const CustomObject &object, const NDArray &pred,
                        const NDArray &target, int64_t examples,
                        const std::vector<double> &weights, double &sum,
                        int64_t &count);

  LossConfig loss_;
  /// The built-in loss (null for a custom one); shared, so copies of the
  /// accumulator (one per output) stay cheap.
  std::shared_ptr<HostLoss> hostLoss_;
  const CustomObject *customLoss_ = nullptr;
  std::vector<MetricConfig> metrics_;
  /// Per metric: the step's IR for it (a batch mean or a stateful
  /// metric's statistics), or null for a loss metric or a custom one.
  std::vector<std::shared_ptr<HostMetricStatistics>> metricIR_;
  /// Per stateful metric: its statistics summed over the batches so far.
  std::vector<std::vector<double>> metricStats_;
  /// Per metric: the loss IR it averages (metricAsLoss), or null, and the
  /// factor of its values.
  std::vector<std::shared_ptr<HostLoss>> metricLosses_;
  std::vector<double> metricScales_;
  /// Per metric: its custom object, or null for a built-in one.
  std::vector<const CustomObject *> customMetrics_;
  double lossSum_ = 0;
  int64_t lossCount_ = 0;
  std::vector<double> metricSums_;
  std::vector<int64_t> metricCounts_;
};

/// The log value of a stateful metric from its statistics summed over the
/// batches so far (none yet: 0): a list for a listResult() metric.
LogValue statefulLogValue(const MetricConfig &metric,
                          llvm::ArrayRef<double> stats);

/// Built-in `metric` (any form TrainingConfig::metrics takes) of all of
/// `pred` against `target` (the form `loss` takes) in one batch, by the
/// step's IR: what evaluate() logs for it on these examples. Throws
/// kcc::Error on a metric or a shape it cannot take.
double evaluateMetric(const std::string &metric, LossKind loss,
                      const NDArray &pred, const NDArray &target);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_HOSTMETRICS_H
