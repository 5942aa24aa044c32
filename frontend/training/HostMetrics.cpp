//===- HostMetrics.cpp - A model's loss and metrics from predictions ------===//

#include "frontend/training/HostMetrics.h"
#include "passes/Losses.h"
#include "runtime/Error.h"

#include <algorithm>
#include <cmath>

using namespace kcc;

namespace {
int64_t argmax(const double *row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j)
    if (row[j] > row[best])
      best = j;
  return best;
}

/// Keras's in_top_k: fewer than k classes score strictly more than `cls`.
bool inTopK(const double *row, int64_t n, int64_t cls) {
  int64_t above = 0;
  for (int64_t j = 0; j < n; ++j)
    above += row[j] > row[cls];
  return above < kTopK;
}
} // namespace

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
    if (const CustomObject *object = customNamed(name)) {
      metrics_.emplace_back(metricLogName(name).str(), MetricKind{});
      customMetrics_.push_back(object);
      continue;
    }
    llvm::Expected<MetricKind> kind = parseMetric(name, config.loss.kind);
    if (!kind)
      throw Error("evaluate: " + llvm::toString(kind.takeError()));
    metrics_.emplace_back(name, *kind);
    customMetrics_.push_back(nullptr);
    if (std::optional<MetricLoss> m = metricAsLoss(*kind)) {
      metricLosses_.back() = std::make_shared<HostLoss>(m->loss);
      metricScales_.back() = m->scale;
    }
  }
  metricSums_.assign(metrics_.size(), 0.0);
  metricCounts_.assign(metrics_.size(), 0);
}

void MetricAccumulator::add(const NDArray &predArray,
                            const NDArray &targetArray,
                            const NDArray &sampleWeight) {
  std::vector<double> pred = predArray.toVector();
  std::vector<double> target = targetArray.toVector();
  int64_t classes = predArray.rank() > 0 ? predArray.shape().back() : 1;
  int64_t rows = classes ? static_cast<int64_t>(pred.size()) / classes : 0;
  std::vector<double> weights =
      sampleWeight.defined() ? sampleWeight.toVector() : std::vector<double>();
  int64_t examples = predArray.rank() > 0 ? predArray.dim(0) : 1;
  if (!weights.empty() && static_cast<int64_t>(weights.size()) != examples)
    throw Error("evaluate: " + std::to_string(weights.size()) +
                " sample weights for " + std::to_string(examples) +
                " examples");
  bool sparse = loss_.kind == LossKind::SparseCategoricalCrossentropy;
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
    lossSum_ += (*hostLoss_)(predArray, targetArray, sampleWeight) * examples;
    lossCount_ += examples;
  }

  for (size_t m = 0; m < metrics_.size(); ++m) {
    int64_t countBefore = metricCounts_[m];
    if (customMetrics_[m]) {
      // Unweighted, as compile()'s metrics are.
      addCustom(*customMetrics_[m], predArray, targetArray, examples, {},
                metricSums_[m], metricCounts_[m]);
      continue;
    }
    if (metricLosses_[m]) {
      // The loss IR's mean of the batch (HostLoss), weighed by its examples.
      metricSums_[m] += metricScales_[m] * examples *
                        (*metricLosses_[m])(predArray, targetArray, NDArray());
      metricCounts_[m] += examples;
      continue;
    }
    switch (metrics_[m].second) {
    case MetricKind::SparseCategoricalAccuracy:
      for (int64_t r = 0; r < rows; ++r)
        metricSums_[m] += argmax(&pred[r * classes], classes) ==
                          static_cast<int64_t>(target[r]);
      metricCounts_[m] += rows;
      break;
    case MetricKind::CategoricalAccuracy:
      for (int64_t r = 0; r < rows; ++r)
        metricSums_[m] += argmax(&pred[r * classes], classes) ==
                          argmax(&target[r * classes], classes);
      metricCounts_[m] += rows;
      break;
    case MetricKind::BinaryAccuracy:
      for (size_t i = 0; i < pred.size(); ++i)
        metricSums_[m] += (pred[i] > 0.5 ? 1.0 : 0.0) == target[i];
      metricCounts_[m] += pred.size();
      break;
    case MetricKind::SparseTopKCategoricalAccuracy:
      for (int64_t r = 0; r < rows; ++r)
        metricSums_[m] += inTopK(&pred[r * classes], classes,
                                 static_cast<int64_t>(target[r]));
      metricCounts_[m] += rows;
      break;
    case MetricKind::TopKCategoricalAccuracy:
      for (int64_t r = 0; r < rows; ++r)
        metricSums_[m] += inTopK(&pred[r * classes], classes,
                                 argmax(&target[r * classes], classes));
      metricCounts_[m] += rows;
      break;
    default:
      break;
    }
    // A metric the step computes but this file does not (yet): say so
    // rather than report a 0.
    if (metricCounts_[m] == countBefore && !pred.empty())
      throw Error("evaluate: metric '" + metrics_[m].first +
                  "' is not computed from predictions yet");
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
    logs[metrics_[m].first] =
        metricCounts_[m] ? metricSums_[m] / metricCounts_[m] : 0.0;
  return logs;
}
