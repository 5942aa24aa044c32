//===- ModelMetrics.h - Keras's logs of every output of a model -*- C++ -*-===//
//
// evaluate() and fit()'s validation of a model of any number of outputs:
// one MetricAccumulator per output, combined into the logs Keras 3 writes.
// One output logs "loss" and its metrics by name; several log "loss" (the
// sum of each output's loss times its loss_weight), "<output>_loss" (the
// output's own loss, unweighted by loss_weight) and "<output>_<metric>".
// Per-example weights weigh every output's loss, as a single Keras
// sample_weight does.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_MODELMETRICS_H
#define KCC_FRONTEND_TRAINING_MODELMETRICS_H

#include "frontend/training/HostMetrics.h"

#include <vector>

namespace kcc {

class ModelMetrics {
public:
  /// Throws kcc::Error naming a metric it cannot compute.
  /// `config` is resolved (CompileOptions::resolvedConfig); `custom` holds
  /// the custom objects it names.
  explicit ModelMetrics(const TrainingConfig &config,
                        const CustomObjects *custom = nullptr);
  /// One batch: the predictions and targets of every output, in order, and
  /// each output's Keras mask (none, or one per output, undefined where the
  /// output has none).
  void add(const std::vector<NDArray> &preds,
           const std::vector<NDArray> &targets,
           const NDArray &sampleWeight = NDArray(),
           const std::vector<NDArray> &masks = {});
  Logs result() const;

private:
  std::vector<OutputTraining> outputs_;
  std::vector<MetricAccumulator> perOutput_;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_MODELMETRICS_H
