//===- Trainer.cpp - compile() and fit() for frontend models --------------===//

#include "frontend/training/Trainer.h"

#include "frontend/training/Jit.h"
#include "runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace kcc {

Trainer::Trainer(Model &model, TrainingConfig config, llvm::raw_ostream *log)
    : model_(model), config_(std::move(config)), log_(log),
      learningRate_(config_.optimizer.resolvedLearningRate()) {
  checkTrainingConfig(config_);
}

Trainer::~Trainer() = default;

void Trainer::setLearningRate(double lr) {
  if (const std::optional<LearningRateSchedule> &s = config_.optimizer.schedule)
    throw Error("setLearningRate: the learning rate follows the schedule " +
                s->str() + " and cannot be set (as in Keras)");
  learningRate_ = lr;
  if (train_)
    train_->setLearningRate(lr);
}

int64_t Trainer::iterations() const {
  return train_ ? train_->iterations() : 0;
}

ExecStats Trainer::stats() const {
  ExecStats s;
  s.mode = config_.mode;
  if (train_)
    s = train_->stats();
  for (const auto &[batch, exe] : inference_) {
    ExecStats e = exe->stats();
    s.opsDispatched += e.opsDispatched;
    s.buffersAllocated += e.buffersAllocated;
    s.bytesAllocated += e.bytesAllocated;
    s.peakLiveBytes = std::max(s.peakLiveBytes, e.peakLiveBytes);
  }
  return s;
}

std::string Trainer::trainModuleText() const {
  return train_ ? train_->moduleText() : std::string();
}

void Trainer::prepareTrainStep(int64_t batchSize) {
  if (!train_ || train_->batchSize() != batchSize) {
    TrainingConfig config = config_;
    config.batch = batchSize;
    config.optimizer.learningRate = learningRate_;
    JitOptions options;
    options.log = log_;
    auto next = std::make_unique<Executable>(jit(model_, config, options));
    // Another batch size: the optimizer state and step count carry over
    // (their shapes do not depend on the batch).
    if (train_) {
      next->setOptimizerState(train_->getOptimizerState());
      next->setIterations(train_->iterations());
    }
    train_ = std::move(next);
  }
  // The model's weights are the truth between fits (the user may set them).
  train_->setWeights(model_.getWeights());
  train_->setLearningRate(learningRate_);
}

std::vector<EpochLogs> Trainer::fit(const Dataset &train,
                                    const FitOptions &fit) {
  if (train.size() < fit.batchSize)
    throw Error("fit: " + std::to_string(train.size()) +
                " examples are fewer than one batch of " +
                std::to_string(fit.batchSize));
  prepareTrainStep(fit.batchSize);
  Executable &exe = *train_;
  const std::vector<std::string> &metrics = exe.metricNames();

  BatchIterator batches(train, fit.batchSize, fit.shuffle, fit.seed);
  std::vector<EpochLogs> history;
  for (int64_t epoch = 0; epoch < fit.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    batches.startEpoch(epoch);
    double lossSum = 0;
    std::vector<double> sums(metrics.size(), 0.0);
    NDArray x, y;
    for (int64_t b = 0; b < batches.numBatches(); ++b) {
      batches.batch(b, x, y);
      StepResult r = exe.step(x, y);
      lossSum += r.loss;
      for (size_t i = 0; i < sums.size(); ++i)
        sums[i] += r.metrics[i];
    }
    model_.setWeights(exe.getWeights());

    EpochLogs logs;
    logs.steps = batches.numBatches();
    logs.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    logs.values["loss"] = lossSum / logs.steps;
    for (size_t i = 0; i < metrics.size(); ++i)
      logs.values[metrics[i]] = sums[i] / logs.steps;
    if (fit.verbose) {
      // Keras's line: metrics in alphabetical order, loss among them.
      std::printf("Epoch %lld/%lld\n%lld/%lld - %.1fs - %.2fms/step",
                  static_cast<long long>(epoch + 1),
                  static_cast<long long>(fit.epochs),
                  static_cast<long long>(logs.steps),
                  static_cast<long long>(logs.steps), logs.seconds,
                  1e3 * logs.seconds / logs.steps);
      for (const auto &[name, value] : logs.values)
        std::printf(" - %s: %.4f", name.c_str(), value);
      std::printf("\n");
      std::fflush(stdout);
    }
    history.push_back(std::move(logs));
  }
  return history;
}

std::map<std::string, double> Trainer::evaluate(const Dataset &data,
                                                int64_t batchSize) {
  int64_t n = data.size();
  if (n == 0)
    throw Error("evaluate: the dataset is empty");
  // One inference Executable per batch size; predict() pads the last
  // partial batch, so every example counts with one static-shape function.
  int64_t full = std::min(batchSize, n);
  std::unique_ptr<Executable> &exe = inference_[full];
  if (!exe)
    exe = std::make_unique<Executable>(
        jitInference(model_, full, config_.mode, log_));
  else
    exe->setWeights(model_.getWeights());
  NDArray pred = exe->predict(data.x);
  int64_t classes = pred.numel() / n, correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (pred.at(i * classes + j) > pred.at(i * classes + best))
        best = j;
    correct += best == static_cast<int64_t>(data.y.at(i));
  }
  return {{"accuracy", static_cast<double>(correct) / n}};
}

} // namespace kcc
