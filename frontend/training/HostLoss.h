//===- HostLoss.h - A built-in loss of predictions, on the host -*- C++ -*-===//
//
// evaluate() and fit()'s validation need the loss of predictions the
// inference @forward returned. Rather than a second copy of the math, the
// loss is the IR kc-build-train-step puts in the step (kcc::buildLoss),
// built into a small function @loss(pred, target[, weight]) per batch shape
// and run by the interpreter, in float64.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_HOSTLOSS_H
#define KCC_FRONTEND_TRAINING_HOSTLOSS_H

#include "config/LossConfig.h"
#include "config/MetricConfig.h"
#include "runtime/NDArray.h"

#include <memory>
#include <vector>

namespace kcc {

class HostLoss {
public:
  explicit HostLoss(const LossConfig &loss);
  ~HostLoss();
  HostLoss(HostLoss &&) noexcept;
  HostLoss &operator=(HostLoss &&) noexcept;

  /// The loss of one batch, reduced as the step reduces it: `pred` [n, ...]
  /// as @forward returns it, `target` in the form the loss takes (class
  /// indices for the sparse loss, any numeric dtype), `weight` [n] or
  /// undefined, `mask` the prediction's Keras mask (0/1, pred's shape
  /// without its last axis) or undefined. Throws kcc::Error on a shape the
  /// loss cannot take.
  double operator()(const NDArray &pred, const NDArray &target,
                    const NDArray &weight,
                    const NDArray &mask = NDArray()) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A built-in metric of one batch of predictions by the IR the step builds,
/// run by the interpreter: a stateful metric's statistics
/// (passes/Metrics.h) in the prediction's float type (float32 from
/// @forward), so its comparisons against thresholds are the step's and
/// Keras's; any other metric's batch mean (buildMetric, one value) in
/// float64.
class HostMetricStatistics {
public:
  /// `targetLoss`: the loss whose target form the targets have (the class
  /// indices of the sparse loss, else the prediction's shape).
  HostMetricStatistics(const MetricConfig &metric, LossKind targetLoss);
  ~HostMetricStatistics();
  HostMetricStatistics(HostMetricStatistics &&) noexcept;
  HostMetricStatistics &operator=(HostMetricStatistics &&) noexcept;

  /// The statistics of `pred` [n, ...] against `target` (any numeric
  /// dtype); a batch mean over the real steps of a prediction with a Keras
  /// `mask` (as HostLoss's). Throws kcc::Error on a shape the metric cannot
  /// take.
  std::vector<double> operator()(const NDArray &pred, const NDArray &target,
                                 const NDArray &mask = NDArray()) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_HOSTLOSS_H
