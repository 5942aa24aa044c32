//===- Trainer.cpp - compile(), fit() and evaluate() for models -----------===//

#include "frontend/training/Trainer.h"

#include "frontend/training/Distributed.h"
#include "frontend/training/Jit.h"
#include "frontend/training/ModelMetrics.h"
#include "frontend/training/Prefetcher.h"
#include "runtime/Collectives.h"
#include "runtime/Error.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

using namespace kcc;

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The callbacks of one fit(): each hook runs them all in order.
class CallbackList {
public:
  explicit CallbackList(std::vector<CallbackPtr> callbacks)
      : callbacks_(std::move(callbacks)) {}
  template <typename F> void each(F f) {
    for (const CallbackPtr &c : callbacks_)
      f(*c);
  }

private:
  std::vector<CallbackPtr> callbacks_;
};
} // namespace

llvm::Error kcc::checkClassWeight(Model &model, const TrainingConfig &config) {
  if (config.classWeight.empty())
    return llvm::Error::success();
  std::vector<Shape> outputs = model.outputShapes();
  int64_t classes =
      outputs.size() == 1 && !outputs[0].empty() ? outputs[0].back() : 1;
  if (classes == 1)
    classes = 2; // one sigmoid unit: classes 0 and 1
  for (auto [cls, weight] : config.classWeight)
    if (cls >= classes)
      return llvm::createStringError(
          "class_weight: class " + std::to_string(cls) +
          " is out of range: the model predicts " + std::to_string(classes) +
          " classes (0 to " + std::to_string(classes - 1) + ")");
  return llvm::Error::success();
}

Trainer::Trainer(Model &model, CompileOptions options, llvm::raw_ostream *log)
    : model_(model), compile_(std::move(options)),
      config_(compile_.resolvedConfig()), log_(log),
      learningRate_(config_.optimizer.resolvedLearningRate()) {
  checkTrainingConfig(config_);
  if (config_.dataParallel)
    Distributed::fromEnvironment(); // MPI up before the first collective
  if (llvm::Error err = checkClassWeight(model_, config_))
    throw Error(llvm::toString(std::move(err)));
}

Trainer::~Trainer() = default;

void Trainer::setLearningRate(double lr) {
  if (!std::isfinite(lr) || lr < 0)
    throw Error("setLearningRate: the learning rate must be a finite number "
                ">= 0, got " +
                pythonFloatRepr(lr));
  if (const std::optional<LearningRateSchedule> &s = config_.optimizer.schedule)
    throw Error("setLearningRate: the learning rate follows the schedule " +
                s->str() + " and cannot be set (as in Keras)");
  learningRate_ = lr;
  if (active_)
    active_->setLearningRate(lr);
}

std::vector<NDArray> Trainer::getWeights() {
  return active_ ? active_->getWeights() : model_.getWeights();
}

void Trainer::setWeights(const std::vector<NDArray> &values) {
  model_.setWeights(values);
  if (active_)
    active_->setWeights(values);
}

int64_t Trainer::iterations() const {
  return active_ ? active_->iterations() : 0;
}

void Trainer::restoreOptimizerState(const std::vector<NDArray> &slots,
                                    int64_t iterations, double learningRate) {
  learningRate_ = learningRate;
  Executable &exe = stepFor(config_.batch);
  exe.setWeights(model_.getWeights());
  exe.setOptimizerState(slots);
  exe.setIterations(iterations);
  exe.setLearningRate(learningRate);
}

ExecStats Trainer::stats() const {
  ExecStats s;
  s.mode = config_.mode;
  auto full = std::max_element(
      steps_.begin(), steps_.end(),
      [](const auto &a, const auto &b) { return a.first < b.first; });
  if (full != steps_.end())
    s = full->second->stats();
  auto addTotals = [&](const Executable &exe) {
    ExecStats e = exe.stats();
    s.opsDispatched += e.opsDispatched;
    s.buffersAllocated += e.buffersAllocated;
    s.bytesAllocated += e.bytesAllocated;
    s.peakLiveBytes = std::max(s.peakLiveBytes, e.peakLiveBytes);
  };
  for (const auto &[batch, exe] : steps_)
    if (full == steps_.end() || exe.get() != full->second.get())
      addTotals(*exe);
  for (const auto &[batch, exe] : inference_)
    addTotals(*exe);
  return s;
}

Executable &Trainer::stepFor(int64_t batch, bool weighted) {
  std::unique_ptr<Executable> &slot = steps_[{batch, weighted}];
  if (!slot) {
    CompileOptions compile = compile_;
    TrainingConfig &config = compile.config = config_;
    config.batch = batch;
    config.sampleWeight = weighted;
    config.classWeight.clear(); // applied here, on the host
    config.optimizer.learningRate = learningRate_;
    JitOptions options;
    options.log = log_;
    slot = std::make_unique<Executable>(jit(model_, compile, options));
  }
  if (active_ != slot.get()) {
    // The one that ran last holds the truth: the optimizer state and the
    // step count do not depend on the batch.
    if (active_) {
      slot->setWeights(active_->getWeights());
      slot->setOptimizerState(active_->getOptimizerState());
      slot->setIterations(active_->iterations());
    }
    active_ = slot.get();
  }
  active_->setLearningRate(learningRate_);
  return *active_;
}

Executable &Trainer::inferenceFor(int64_t batch, bool outputMasks) {
  std::unique_ptr<Executable> &exe = inference_[{batch, outputMasks}];
  if (!exe)
    exe = std::make_unique<Executable>(
        jitInference(model_, batch, config_.mode, log_, outputMasks));
  exe->setWeights(getWeights());
  return *exe;
}

TensorSpec Trainer::inputSpec(int64_t batch) {
  if (!active_)
    stepFor(batch);
  TensorSpec s = active_->inputSpec();
  s.shape[0] = batch;
  return s;
}

TensorSpec Trainer::targetSpec(int64_t batch) {
  if (!active_)
    stepFor(batch);
  TensorSpec s = active_->targetSpec();
  s.shape[0] = batch;
  return s;
}

void Trainer::averageOverRanks(StepResult &r) {
  if (collectives::size() == 1)
    return;
  std::vector<double> values = {r.loss};
  values.insert(values.end(), r.metrics.begin(), r.metrics.end());
  // A stateful metric's statistics add up over the ranks' slices: their
  // mean times the rank count.
  for (const std::vector<double> &s : r.statistics)
    values.insert(values.end(), s.begin(), s.end());
  values = Distributed::fromEnvironment().mean(std::move(values));
  r.loss = values[0];
  std::copy(values.begin() + 1, values.begin() + 1 + r.metrics.size(),
            r.metrics.begin());
  auto at = values.begin() + 1 + r.metrics.size();
  double ranks = collectives::size();
  for (std::vector<double> &s : r.statistics)
    for (double &v : s)
      v = *at++ * ranks;
  if (active_)
    for (size_t i = 0; i < r.statistics.size(); ++i)
      if (const std::optional<MetricConfig> &m = active_->statefulMetrics()[i])
        r.metrics[i] = metricResult(*m, r.statistics[i]);
}

StepResult Trainer::trainOnBatch(const NDArray &x, const NDArray &y) {
  return trainOnBatch(x, y, NDArray());
}

NDArray Trainer::classWeightsOf(const NDArray &y) const {
  if (!y.defined() || y.rank() < 1)
    throw Error("class_weight: the targets must have a batch dimension");
  int64_t n = y.dim(0);
  int64_t row = n ? y.numel() / n : 0;
  std::vector<double> values = y.toVector();
  std::vector<double> weights(n, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    double cls = values[i * row];
    if (row > 1) { // one-hot or probabilities: argmax, as Keras does
      int64_t best = 0;
      for (int64_t k = 1; k < row; ++k)
        if (values[i * row + k] > values[i * row + best])
          best = k;
      cls = static_cast<double>(best);
    }
    auto it = config_.classWeight.find(std::llround(cls));
    if (it != config_.classWeight.end())
      weights[i] = it->second;
  }
  return NDArray::fromVector({n}, weights, DType::F32);
}

namespace {

/// ctc's label sequences [N, W] padded with zeros to the [N, steps] the
/// step takes (trailing zeros leave Keras's ctc unchanged; UserData pads
/// .npz labels alike); any other target as it is.
NDArray padLabelSequences(const TrainingConfig &config, const NDArray &y,
                          const TensorSpec &target) {
  if (config.loss.kind != LossKind::CTC || !config.loss.custom.empty() ||
      !y.defined() || y.rank() != 2 || target.shape.size() != 2 ||
      y.dim(1) >= target.shape[1])
    return y;
  int64_t rows = y.dim(0), width = y.dim(1), steps = target.shape[1];
  std::vector<double> labels = y.toVector(), padded(rows * steps, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    std::copy_n(labels.begin() + r * width, width, padded.begin() + r * steps);
  return NDArray::fromVector({rows, steps}, padded, target.dtype);
}

} // namespace

StepResult Trainer::trainOnBatch(const NDArray &x, const NDArray &y,
                                 const NDArray &sampleWeight) {
  if (!x.defined() || x.rank() < 1 || x.dim(0) < 1)
    throw Error("trainOnBatch: the input batch is empty");
  NDArray w = sampleWeight;
  if (!config_.classWeight.empty()) {
    if (w.defined())
      throw Error("trainOnBatch: class_weight and sample_weight cannot be "
                  "used together (as in Keras)");
    w = classWeightsOf(y);
  }
  if (w.defined() && w.numel() == x.dim(0) && w.rank() != 1)
    w = w.reshaped({x.dim(0)});
  Executable &exe = stepFor(x.dim(0), w.defined());
  TensorSpec in = exe.inputSpec();
  NDArray input = x.dtype() == in.dtype ? x : x.to(in.dtype);
  NDArray target = padLabelSequences(config_, y, exe.targetSpec());
  return w.defined() ? exe.step(input, target, w) : exe.step(input, target);
}

StepResult Trainer::trainOnBatch(const std::vector<NDArray> &inputs,
                                 const std::vector<NDArray> &targets,
                                 const NDArray &sampleWeight) {
  if (inputs.empty() || !inputs[0].defined() || inputs[0].rank() < 1 ||
      inputs[0].dim(0) < 1)
    throw Error("trainOnBatch: the input batch is empty");
  if (!config_.classWeight.empty())
    throw Error("trainOnBatch: class_weight needs a model of one output");
  int64_t rows = inputs[0].dim(0);
  NDArray w = sampleWeight;
  if (w.defined() && w.numel() == rows && w.rank() != 1)
    w = w.reshaped({rows});
  Executable &exe = stepFor(rows, w.defined());
  std::vector<TensorSpec> specs = exe.inputSpecs();
  std::vector<NDArray> cast;
  for (size_t i = 0; i < inputs.size(); ++i)
    cast.push_back(i < specs.size() && inputs[i].defined() &&
                           inputs[i].dtype() != specs[i].dtype
                       ? inputs[i].to(specs[i].dtype)
                       : inputs[i]);
  return exe.step(cast, targets, w);
}

/// Rows [begin, end) of `x`: a view, no copy.
static NDArray rowsOf(const NDArray &x, int64_t begin, int64_t end) {
  Shape shape = x.shape();
  int64_t row = x.bytes() / shape[0];
  shape[0] = end - begin;
  return NDArray::borrow(
      const_cast<char *>(static_cast<const char *>(x.rawData())) + begin * row,
      shape, x.dtype());
}

std::vector<NDArray>
Trainer::predict(const std::vector<NDArray> &inputs, int64_t batchSize,
                 const std::vector<CallbackPtr> &callbacks) {
  if (inputs.empty() || !inputs[0].defined() || inputs[0].rank() < 1 ||
      inputs[0].dim(0) == 0)
    throw Error("predict: no examples");
  int64_t n = inputs[0].dim(0), batch = std::min(batchSize, n);
  Executable &exe = inferenceFor(batch);
  if (callbacks.empty())
    return exe.predict(inputs);
  // Batch by batch, so that the hooks see each one. predict() checks the
  // rows of every input against the first's; the views need them first.
  for (const NDArray &x : inputs)
    if (!x.defined() || x.rank() < 1 || x.dim(0) != n)
      return exe.predict(inputs); // throws its located error
  CallbackList hooks(callbacks);
  hooks.each([&](Callback &c) { c.setTrainer(this); });
  stopPredicting = false;
  Logs logs;
  hooks.each([&](Callback &c) { c.onPredictBegin(logs); });
  std::vector<NDArray> out;
  int64_t done = 0;
  for (int64_t b = 0; done < n && !stopPredicting; ++b) {
    int64_t end = std::min(n, done + batch);
    std::vector<NDArray> views;
    for (const NDArray &x : inputs)
      views.push_back(rowsOf(x, done, end));
    Logs batchLogs;
    hooks.each([&](Callback &c) { c.onPredictBatchBegin(b, batchLogs); });
    std::vector<NDArray> part = exe.predict(views);
    if (out.empty())
      for (const NDArray &p : part) {
        Shape shape = p.shape();
        shape[0] = n;
        out.push_back(NDArray::empty(shape, p.dtype()));
      }
    for (size_t k = 0; k < part.size(); ++k)
      std::memcpy(static_cast<char *>(out[k].rawData()) +
                      done * (out[k].bytes() / n),
                  part[k].rawData(), part[k].bytes());
    hooks.each([&](Callback &c) { c.onPredictBatchEnd(b, part); });
    done = end;
  }
  if (done < n) // stopped: the rows predicted
    for (NDArray &o : out)
      o = rowsOf(o, 0, done).clone();
  hooks.each([&](Callback &c) { c.onPredictEnd(logs); });
  return out;
}

NDArray Trainer::predict(const NDArray &x, int64_t batchSize) {
  if (!x.defined() || x.rank() < 1 || x.dim(0) == 0)
    throw Error("predict: no examples");
  return inferenceFor(std::min(batchSize, x.dim(0))).predict(x);
}

Logs Trainer::evaluate(const DataSource &data,
                       const std::vector<CallbackPtr> &callbacks) {
  int64_t n = data.numBatches();
  if (n == 0)
    throw Error("evaluate: the data has no batches");
  // A masked output's loss and metrics apply its Keras mask, which the
  // inference step then returns after the predictions.
  std::vector<size_t> masked;
  for (auto [k, out] : llvm::enumerate(model_.graphOutputs()))
    if (out.mask())
      masked.push_back(k);
  size_t outputs = model_.numOutputs();
  ModelMetrics acc(config_, &compile_.customObjects);
  bool several =
      model_.inputShapes().size() != 1 || outputs != 1 || !masked.empty();
  CallbackList hooks(callbacks);
  hooks.each([&](Callback &c) { c.setTrainer(this); });
  stopEvaluating = false;
  Logs logs;
  hooks.each([&](Callback &c) { c.onTestBegin(logs); });
  Executable *exe = nullptr;
  for (int64_t i = 0; i < n && !stopEvaluating; ++i) {
    Logs batchLogs;
    hooks.each([&](Callback &c) { c.onTestBatchBegin(i, batchLogs); });
    Batch b = data.batch(i);
    if (!exe)
      exe = &inferenceFor(b.size(), !masked.empty());
    std::vector<NDArray> preds = several
                                     ? exe->predict(b.allInputs())
                                     : std::vector<NDArray>{exe->predict(b.x)};
    std::vector<NDArray> masks;
    if (!masked.empty()) {
      masks.resize(outputs);
      for (auto [j, k] : llvm::enumerate(masked))
        masks[k] = preds[outputs + j];
      preds.resize(outputs);
    }
    acc.add(preds, b.allTargets(), b.sampleWeight, masks);
    if (!callbacks.empty()) {
      batchLogs = acc.result();
      hooks.each([&](Callback &c) { c.onTestBatchEnd(i, batchLogs); });
    }
  }
  logs = acc.result();
  hooks.each([&](Callback &c) { c.onTestEnd(logs); });
  return logs;
}

Logs Trainer::evaluate(const Dataset &data, int64_t batchSize,
                       const std::vector<CallbackPtr> &callbacks) {
  if (data.size() == 0)
    throw Error("evaluate: the dataset is empty");
  int64_t batch = std::min(batchSize, data.size());
  ArrayDataSource source(
      ExampleArray::fromNDArray(data.x, "x"),
      ExampleArray::fromNDArray(
          padLabelSequences(config_, data.y, targetSpec(batch)), "y"),
      batch, inputSpec(batch).dtype, targetSpec(batch).dtype);
  return evaluate(source, callbacks);
}

History Trainer::fit(const Dataset &train, const FitOptions &fit,
                     const Dataset *validation) {
  if (fit.validationSplit < 0 || fit.validationSplit >= 1)
    throw Error("fit: validation_split must be in [0, 1), got " +
                pythonFloatRepr(fit.validationSplit));
  int64_t batch = fit.batchSize;
  DType xType = inputSpec(batch).dtype, yType = targetSpec(batch).dtype;
  ExampleArray x = ExampleArray::fromNDArray(train.x, "x");
  ExampleArray y = ExampleArray::fromNDArray(
      padLabelSequences(config_, train.y, targetSpec(batch)), "y");
  std::unique_ptr<ArrayDataSource> val;
  if (fit.validationSplit > 0 && !validation) {
    // Keras: split_at = floor(n * (1 - split)), the tail validates.
    int64_t splitAt = static_cast<int64_t>(
        std::floor(x.rows() * (1.0 - fit.validationSplit)));
    if (splitAt == 0 || splitAt == x.rows())
      throw Error("fit: validation_split " +
                  pythonFloatRepr(fit.validationSplit) + " of " +
                  std::to_string(x.rows()) +
                  " examples leaves one of the two splits empty");
    int64_t vb = fit.validationBatchSize ? fit.validationBatchSize : batch;
    val = std::make_unique<ArrayDataSource>(x.slice(splitAt, x.rows()),
                                            y.slice(splitAt, y.rows()), vb,
                                            xType, yType);
    x = x.slice(0, splitAt);
    y = y.slice(0, splitAt);
  } else if (validation) {
    int64_t vb = fit.validationBatchSize ? fit.validationBatchSize : batch;
    val = std::make_unique<ArrayDataSource>(
        ExampleArray::fromNDArray(validation->x, "validation x"),
        ExampleArray::fromNDArray(
            padLabelSequences(config_, validation->y, targetSpec(batch)),
            "validation y"),
        vb, xType, yType);
  }
  ArrayDataSource source(x, y, batch, xType, yType);
  source.setShuffle(fit.shuffle, fit.seed);
  return this->fit(source, fit, val.get());
}

/// The ranks' shared state before the first data-parallel step: rank 0's
/// weights, optimizer state and step count (a resumed run's included).
static void broadcastFromRoot(Executable &exe) {
  Distributed dist = Distributed::fromEnvironment();
  std::vector<NDArray> weights = exe.getWeights();
  std::vector<NDArray> state = exe.getOptimizerState();
  dist.broadcast(weights);
  dist.broadcast(state);
  std::vector<NDArray> iterations = {
      NDArray::scalar(static_cast<double>(exe.iterations()), DType::I64)};
  dist.broadcast(iterations);
  exe.setWeights(weights);
  exe.setOptimizerState(state);
  exe.setIterations(static_cast<int64_t>(iterations[0].at(0)));
}

History Trainer::fit(DataSource &train, const FitOptions &fit,
                     DataSource *validation) {
  if (!config_.dataParallel || collectives::size() == 1)
    return fitShard(train, fit, validation);
  // Each rank steps on its slice of every global batch.
  ShardedDataSource shard(train, collectives::rank(), collectives::size());
  FitOptions local = fit;
  if (collectives::rank() != 0)
    local.verbose = 0;
  return fitShard(shard, local, validation);
}

/// Keras's validation_freq: validate after every validationFreq-th epoch,
/// or after the (1-based) epochs listed.
static bool validatesAfter(const FitOptions &fit, int64_t epoch) {
  if (!fit.validationEpochs.empty())
    return llvm::is_contained(fit.validationEpochs, epoch + 1);
  return (epoch + 1) % fit.validationFreq == 0;
}

History Trainer::fitShard(DataSource &train, const FitOptions &fit,
                          DataSource *validation) {
  if (fit.epochs < 1 || fit.initialEpoch < 0 || fit.initialEpoch >= fit.epochs)
    throw Error("fit: epochs " + std::to_string(fit.epochs) +
                " and initial epoch " + std::to_string(fit.initialEpoch) +
                ": nothing to train");
  if (fit.validationFreq < 1)
    throw Error("fit: validation_freq must be 1 or more, got " +
                std::to_string(fit.validationFreq));
  if (fit.verbose < 0 || fit.verbose > 2)
    throw Error("fit: verbose must be 0, 1 or 2, got " +
                std::to_string(fit.verbose));
  int64_t total = train.numBatches();
  if (total < 1)
    throw Error("fit: the training data has no batches");
  int64_t steps =
      fit.stepsPerEpoch > 0 ? std::min(total, fit.stepsPerEpoch) : total;

  // The model's weights are the truth between fits (the user may set them).
  if (active_)
    active_->setWeights(model_.getWeights());
  // Build every step the data will need now (the partial batch's too), so
  // no compile runs inside an epoch; the full batch's ends up active.
  std::vector<int64_t> sizes = train.batchSizes();
  bool weighted = train.hasSampleWeights() || !config_.classWeight.empty();
  if (train.hasSampleWeights() && !config_.classWeight.empty())
    throw Error("fit: class_weight and sample_weight cannot be used "
                "together (as in Keras)");
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it)
    stepFor(*it, weighted);
  if (config_.dataParallel && active_ && collectives::size() > 1)
    broadcastFromRoot(*active_);
  if (validation)
    if (std::vector<int64_t> v = validation->batchSizes(); !v.empty())
      inferenceFor(v.front());
  stopTraining = false;
  trainData_ = &train;

  auto history = std::make_shared<History>();
  std::vector<CallbackPtr> all;
  if (fit.verbose)
    all.push_back(std::make_shared<ProgbarLogger>(
        fit.progress ? *fit.progress : llvm::outs(), fit.verbose, fit.epochs,
        steps));
  all.insert(all.end(), fit.callbacks.begin(), fit.callbacks.end());
  all.push_back(history);
  CallbackList callbacks(all);
  callbacks.each([&](Callback &c) { c.setTrainer(this); });

  Logs logs;
  callbacks.each([&](Callback &c) { c.onTrainBegin(logs); });
  // Batches of the current pass over the data already trained on: with
  // steps_per_epoch an epoch continues where the last one stopped, and the
  // epoch that reaches the data's end stops there (as Keras's iterator).
  int64_t position = 0;
  for (int64_t epoch = fit.initialEpoch; epoch < fit.epochs; ++epoch) {
    auto start = Clock::now();
    if (position == 0)
      train.onEpochBegin(epoch);
    int64_t count = std::min(steps, total - position);
    Logs epochLogs;
    callbacks.each([&](Callback &c) { c.onEpochBegin(epoch, epochLogs); });

    std::vector<std::string> names;
    double lossSum = 0, stepSeconds = 0;
    std::vector<double> sums;
    std::vector<std::vector<double>> statistics;
    int64_t seen = 0, done = 0;
    {
      Prefetcher ahead(train, position, count, fit.workers, fit.prefetchDepth);
      for (int64_t b = 0; b < count && !stopTraining; ++b) {
        current_ = ahead.next();
        Logs batchLogs;
        callbacks.each([&](Callback &c) { c.onBatchBegin(b, batchLogs); });
        auto stepStart = Clock::now();
        StepResult r =
            current_.inputs.empty() && current_.targets.empty()
                ? trainOnBatch(current_.x, current_.y, current_.sampleWeight)
                : trainOnBatch(current_.inputs, current_.targets,
                               current_.sampleWeight);
        stepSeconds += secondsSince(stepStart);
        if (config_.dataParallel) {
          // A rank's metrics are means over its slice: weighed by its
          // share, their average is the global batch's mean (the loss is,
          // by the slice's sample weights: ShardedDataSource).
          int64_t g = current_.globalSize;
          if (g && current_.size() * collectives::size() != g)
            for (double &m : r.metrics)
              m *= double(current_.size() * collectives::size()) / g;
          averageOverRanks(r);
        }
        if (names.empty()) {
          names = active_->metricNames();
          sums.assign(names.size(), 0.0);
          statistics.assign(names.size(), {});
        }
        // Keras weighs each batch's mean by its size (a partial batch
        // counts for its examples); a stateful metric sums its statistics
        // over the epoch and computes its value from the sums.
        int64_t n = current_.globalSize ? current_.globalSize : current_.size();
        lossSum += r.loss * n;
        for (size_t i = 0; i < sums.size(); ++i) {
          if (i < r.statistics.size() && !r.statistics[i].empty()) {
            std::vector<double> &total = statistics[i];
            total.resize(r.statistics[i].size(), 0.0);
            for (size_t j = 0; j < total.size(); ++j)
              total[j] += r.statistics[i][j];
            continue;
          }
          sums[i] += r.metrics[i] * n;
        }
        seen += n;
        ++done;
        batchLogs["loss"] = lossSum / seen;
        const std::vector<std::optional<MetricConfig>> &stateful =
            active_->statefulMetrics();
        for (size_t i = 0; i < sums.size(); ++i)
          batchLogs[names[i]] =
              i < stateful.size() && stateful[i] && !statistics[i].empty()
                  ? statefulLogValue(*stateful[i], statistics[i])
                  : LogValue(sums[i] / seen);
        callbacks.each([&](Callback &c) { c.onBatchEnd(b, batchLogs); });
        epochLogs = batchLogs;
      }
    }
    position = position + count < total ? position + count : 0;
    train.onEpochEnd();
    current_ = Batch();
    model_.setWeights(active_->getWeights());
    if (validation && validatesAfter(fit, epoch))
      for (const auto &[key, value] : evaluate(*validation, all))
        epochLogs["val_" + key] = value;
    callbacks.each([&](Callback &c) { c.onEpochEnd(epoch, epochLogs); });
    EpochLogs record;
    record.values = epochLogs;
    record.steps = done;
    record.seconds = secondsSince(start);
    record.stepSeconds = stepSeconds;
    history->epochs.push_back(std::move(record));
    logs = epochLogs;
    if (stopTraining)
      break;
  }
  callbacks.each([&](Callback &c) { c.onTrainEnd(logs); });
  model_.setWeights(getWeights());
  trainData_ = nullptr;
  return std::move(*history);
}
