//===- HostMetrics.cpp - A model's loss and metrics from predictions ------===//

#include "frontend/training/HostMetrics.h"
#include "passes/Losses.h"
#include "runtime/Error.h"

#include <algorithm>
#include <cmath>

using namespace kcc;

MetricAccumulator::MetricAccumulator(const TrainingConfig &config,
                                     const CustomObjects *custom)
    : loss_(config.loss) {
  if (loss_.custom.empty())
    hostLoss_ = std::make_shared<HostLoss>(loss_);
  auto customNamed = [&](const std::string &name) -> const CustomObject * {
    if (!custom)
      return nullptr;
    auto it = custom->find(name);
    return it == custom->end() ? nullptr : &it->second;
  };
  if (!loss_.custom.empty() && !(customLoss_ = customNamed(loss_.custom)))
    throw Error("evaluate: custom loss '" + loss_.custom +
                "' has no function in CompileOptions::customObjects");
  for (const std::string &name : config.metrics) {
    metricLosses_.emplace_back();
    metricScales_.push_back(1.0);
    metricIR_.emplace_back();
    if (const CustomObject *object = customNamed(name)) {
      MetricConfig m;
      m.name = metricLogName(name).str();
      metrics_.push_back(m);
      customMetrics_.push_back(object);
      continue;
    }
    llvm::Expected<MetricConfig> m =
        MetricConfig::parse(name, config.loss.kind);
    if (!m)
      throw Error("evaluate: " + llvm::toString(m.takeError()));
    metrics_.push_back(*m);
    customMetrics_.push_back(nullptr);
    if (std::optional<MetricLoss> loss = metricAsLoss(m->kind)) {
      metricLosses_.back() = std::make_shared<HostLoss>(loss->loss);
      metricScales_.back() = loss->scale;
      continue;
    }
    // The step's own IR: a batch mean, or a stateful metric's statistics.
    metricIR_.back() =
        std::make_shared<HostMetricStatistics>(*m, config.loss.kind);
  }
  metricStats_.assign(metrics_.size(), {});
  metricSums_.assign(metrics_.size(), 0.0);
  metricCounts_.assign(metrics_.size(), 0);
}

void MetricAccumulator::add(const NDArray &predArray,
                            const NDArray &targetArray,
                            const NDArray &sampleWeight, const NDArray &mask) {
  if (mask.defined())
    checkMaskable();
  std::vector<double> target = targetArray.toVector();
  int64_t classes = predArray.rank() > 0 ? predArray.shape().back() : 1;
  std::vector<double> weights =
      sampleWeight.defined() ? sampleWeight.toVector() : std::vector<double>();
  int64_t examples = predArray.rank() > 0 ? predArray.dim(0) : 1;
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != examples)
    throw Error("evaluate: " + std::to_string(weights.size()) +
                " sample weights for " + std::to_string(examples) +
                " examples");
  // Class indices: the sparse loss's labels, ctc's label sequences.
  bool sparse = loss_.kind == LossKind::SparseCategoricalCrossentropy ||
                loss_.kind == LossKind::CTC;
  if (customLoss_) {
    addCustom(*customLoss_, predArray, targetArray, examples, weights, lossSum_,
              lossCount_);
  } else {
    if (sparse && !loss_.ignoreClass)
      for (double label : target)
        if (!(label >= 0 && label < classes))
          throw Error("evaluate: label " + pythonFloatRepr(label) +
                      " is out of range for " + std::to_string(classes) +
                      " classes");
    // Keras's evaluate() averages the batch losses by their example counts.
    lossSum_ +=
        (*hostLoss_)(predArray, targetArray, sampleWeight, mask) * examples;
    lossCount_ += examples;
  }

  // A masked prediction's metric values count once per real step.
  int64_t counted = examples;
  if (mask.defined()) {
    double real = 0;
    for (double v : mask.toVector())
      real += v;
    counted = static_cast<int64_t>(std::llround(real));
  }
  for (size_t m = 0; m < metrics_.size(); ++m) {
    if (customMetrics_[m]) {
      // Unweighted, as compile()'s metrics are.
      addCustom(*customMetrics_[m], predArray, targetArray, examples, {},
                metricSums_[m], metricCounts_[m]);
      continue;
    }
    if (metricLosses_[m]) {
      // The loss IR's mean of the batch (HostLoss), weighed by its examples.
      if (counted == 0)
        continue;
      metricSums_[m] +=
          metricScales_[m] * counted *
          (*metricLosses_[m])(predArray, targetArray, NDArray(), mask);
      metricCounts_[m] += counted;
      continue;
    }
    if (counted == 0)
      continue;
    std::vector<double> values = (*metricIR_[m])(predArray, targetArray, mask);
    if (metrics_[m].stateful()) {
      std::vector<double> &total = metricStats_[m];
      total.resize(values.size(), 0.0);
      for (size_t i = 0; i < values.size(); ++i)
        total[i] += values[i];
      metricCounts_[m] += examples;
      continue;
    }
    // A batch mean, weighed by its examples (or real steps) as Keras's Mean
    // metrics weigh it (each value counts once, however batches split them).
    metricSums_[m] += values[0] * counted;
    metricCounts_[m] += counted;
  }
}

void MetricAccumulator::checkMaskable() const {
  // The step's rule (kc-build-train-step): a mask weighs the built-in
  // losses, the accuracies and the loss metrics.
  if (customLoss_)
    throw Error("evaluate: the prediction carries a Keras mask, which custom "
                "loss '" +
                loss_.custom + "' cannot take");
  for (size_t m = 0; m < metrics_.size(); ++m) {
    const MetricConfig &metric = metrics_[m];
    bool ok = !customMetrics_[m] && !metric.stateful() &&
              (metricAsLoss(metric.kind) ||
               metric.kind == MetricKind::SparseCategoricalAccuracy ||
               metric.kind == MetricKind::CategoricalAccuracy);
    if (!ok)
      throw Error("evaluate: metric '" + metric.logName() +
                  "' cannot take the prediction's Keras mask (masked "
                  "predictions support the accuracies and the loss metrics)");
  }
}

void MetricAccumulator::addCustom(const CustomObject &object,
                                  const NDArray &pred, const NDArray &target,
                                  int64_t examples,
                                  const std::vector<double> &weights,
                                  double &sum, int64_t &count) {
  Tensor out = object.fn(Tensor(target), Tensor(pred));
  std::vector<double> values = out.toVector();
  if (out.rank() == 0) {
    if (!weights.empty())
      throw Error("evaluate: a custom loss returning one scalar cannot be "
                  "weighed by sample weights");
    // Keras's evaluate() averages batch values by their example counts.
    sum += values[0] * examples;
    count += examples;
    return;
  }
  if (out.dim(0) != examples)
    throw Error("evaluate: a custom loss or metric returned " +
                shapeToString(out.shape()) + " for " +
                std::to_string(examples) + " examples");
  size_t perExample = values.size() / examples;
  for (size_t i = 0; i < values.size(); ++i)
    sum += (weights.empty() ? 1.0 : weights[i / perExample]) * values[i];
  count += values.size();
}

Logs MetricAccumulator::result() const {
  Logs logs;
  logs["loss"] = lossCount_ ? lossSum_ / lossCount_ : 0.0;
  for (size_t m = 0; m < metrics_.size(); ++m)
    logs[metrics_[m].logName()] =
        metrics_[m].stateful() && !customMetrics_[m]
            ? statefulLogValue(metrics_[m], metricStats_[m])
            : LogValue(metricCounts_[m] ? metricSums_[m] / metricCounts_[m]
                                        : 0.0);
  return logs;
}

LogValue kcc::statefulLogValue(const MetricConfig &metric,
                               llvm::ArrayRef<double> stats) {
  if (stats.empty())
    return 0.0;
  std::vector<double> values = metricValues(metric, stats);
  return metric.listResult() ? LogValue::list(values) : LogValue(values[0]);
}

double kcc::evaluateMetric(const std::string &metric, LossKind loss,
                           const NDArray &pred, const NDArray &target) {
  llvm::Expected<MetricConfig> m = MetricConfig::parse(metric, loss);
  if (!m)
    throw Error("evaluate: " + llvm::toString(m.takeError()));
  if (std::optional<MetricLoss> l = metricAsLoss(m->kind))
    return l->scale * HostLoss(l->loss)(pred, target, NDArray());
  std::vector<double> values = HostMetricStatistics(*m, loss)(pred, target);
  return m->stateful() ? metricResult(*m, values) : values[0];
}
