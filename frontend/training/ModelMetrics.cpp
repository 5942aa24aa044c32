//===- ModelMetrics.cpp - Keras's logs of every output of a model ---------===//

#include "frontend/training/ModelMetrics.h"
#include "runtime/Error.h"

using namespace kcc;

ModelMetrics::ModelMetrics(const TrainingConfig &config,
                           const CustomObjects *custom)
    : outputs_(config.outputs) {
  if (outputs_.empty()) {
    perOutput_.emplace_back(config, custom);
    return;
  }
  for (const OutputTraining &out : outputs_) {
    TrainingConfig one = config;
    one.outputs.clear();
    one.loss = out.loss;
    one.metrics = out.metrics;
    perOutput_.emplace_back(one, custom);
  }
}

void ModelMetrics::add(const std::vector<NDArray> &preds,
                       const std::vector<NDArray> &targets,
                       const NDArray &sampleWeight,
                       const std::vector<NDArray> &masks) {
  if (preds.size() != perOutput_.size() || targets.size() != perOutput_.size())
    throw Error("evaluate: " + std::to_string(preds.size()) +
                " predictions and " + std::to_string(targets.size()) +
                " targets for a model of " + std::to_string(perOutput_.size()) +
                " outputs");
  for (size_t k = 0; k < perOutput_.size(); ++k)
    perOutput_[k].add(preds[k], targets[k], sampleWeight,
                      k < masks.size() ? masks[k] : NDArray());
}

Logs ModelMetrics::result() const {
  if (outputs_.empty())
    return perOutput_[0].result();
  Logs logs;
  double total = 0;
  for (size_t k = 0; k < outputs_.size(); ++k) {
    const std::string &name = outputs_[k].name;
    for (const auto &[key, value] : perOutput_[k].result()) {
      logs[name + "_" + key] = value;
      if (key == "loss")
        total += outputs_[k].lossWeight * value;
    }
  }
  logs["loss"] = total;
  return logs;
}
