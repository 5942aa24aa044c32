//===- Session.cpp - One Keras model trained by kcc -----------------------===//

#include "Session.h"

#include "frontend/keras/KerasVariables.h"
#include "runtime/Error.h"

#include <chrono>

using namespace kcc;
using namespace kcc::python;

Session::Session(keras::ImportedModel imported, const std::string &mode,
                 std::string source)
    : imported_(std::move(imported)), source_(std::move(source)) {
  llvm::Expected<ExecMode> m = parseExecMode(mode);
  if (!m)
    throw Error("mode: " + llvm::toString(m.takeError()));
  mode_ = *m;
  if (imported_.training && imported_.trainingError.empty()) {
    training_ = *imported_.training;
    training_->mode = mode_;
  }
}

std::vector<std::string> Session::inputNames() {
  return imported_.model->inputNames();
}

std::vector<std::string> Session::outputNames() {
  return imported_.model->outputNames();
}

const TrainingConfig &Session::training() const {
  if (!imported_.trainingError.empty())
    throw Error(imported_.trainingError);
  if (!training_)
    throw Error(source_ + ": the model is not compiled: call "
                          "model.compile(optimizer=..., loss=...) first");
  return *training_;
}

Trainer &Session::trainer(const std::map<int64_t, double> &classWeight) {
  if (trainer_ && classWeight == classWeight_)
    return *trainer_;
  TrainingConfig config = training();
  config.classWeight = classWeight;
  auto next = std::make_unique<Trainer>(*imported_.model, config, nullptr);
  if (trainer_ && trainer_->executable()) {
    // The weights the old Trainer's step holds (train_on_batch leaves them
    // there) and its optimizer state carry over.
    imported_.model->setWeights(trainer_->getWeights());
    Executable &exe = *trainer_->executable();
    next->restoreOptimizerState(exe.getOptimizerState(), exe.iterations(),
                                trainer_->learningRate());
  }
  trainer_ = std::move(next);
  classWeight_ = classWeight;
  return *trainer_;
}

Trainer &Session::trainer() {
  return trainer_ ? *trainer_ : trainer(std::map<int64_t, double>());
}

void Session::setKerasWeights(const std::vector<NDArray> &values) {
  std::vector<NDArray> weights =
      keras::weightsFromKerasOrder(imported_, values, source_ + ": weights");
  // Borrowed NumPy memory must not outlive the call: keep copies.
  for (NDArray &w : weights)
    w = w.to(w.dtype());
  if (trainer_)
    trainer_->setWeights(weights);
  else
    imported_.model->setWeights(weights);
}

std::vector<NDArray> Session::kerasWeights() {
  return keras::weightsToKerasOrder(imported_,
                                    trainer_ ? trainer_->getWeights()
                                             : imported_.model->getWeights());
}

int64_t Session::iterations() { return trainer_ ? trainer_->iterations() : 0; }

std::optional<std::vector<NDArray>> Session::kerasOptimizerVariables() {
  if (!trainer_ || !trainer_->executable())
    return std::nullopt;
  Executable &exe = *trainer_->executable();
  keras::OptimizerState state;
  state.slots = exe.getOptimizerState();
  state.iterations = exe.iterations();
  state.learningRate = trainer_->learningRate();
  return keras::optimizerToKerasOrder(imported_, training().optimizer, state);
}

void Session::setKerasOptimizerVariables(
    const std::vector<NDArray> &variables) {
  keras::OptimizerState state =
      keras::optimizerFromKerasOrder(imported_, training().optimizer, variables,
                                     source_ + ": optimizer variables");
  for (NDArray &s : state.slots)
    s = s.to(s.dtype());
  trainer(classWeight_)
      .restoreOptimizerState(state.slots, state.iterations, state.learningRate);
}

Examples Session::examples(const std::vector<NDArray> &inputs,
                           const std::vector<NDArray> &targets,
                           const NDArray &sampleWeight,
                           const std::string &what) {
  DataSpec spec =
      dataSpecOf(*imported_.model, training_ ? *training_ : TrainingConfig());
  Examples e;
  for (size_t i = 0; i < inputs.size(); ++i)
    e.x.push_back(ExampleArray::fromNDArray(
        inputs[i], i < spec.inputs.size() ? spec.inputs[i].name : "x"));
  for (size_t i = 0; i < targets.size(); ++i)
    e.y.push_back(ExampleArray::fromNDArray(
        targets[i], i < spec.targets.size() ? spec.targets[i].name : "y"));
  if (sampleWeight.defined())
    e.sampleWeight = ExampleArray::fromNDArray(sampleWeight, "sample_weight");
  if (targets.empty())
    spec.targets.clear();
  checkExamples(e, spec, what, nullptr);
  return e;
}

DataSpec Session::dataSpec() {
  return dataSpecOf(*imported_.model, training());
}

std::unique_ptr<ArrayDataSource> Session::arraySource(const Examples &data,
                                                      int64_t batchSize,
                                                      bool shuffle,
                                                      uint64_t seed) {
  std::unique_ptr<ArrayDataSource> source = dataSourceOf(
      data, dataSpec(), std::max<int64_t>(1, std::min(batchSize, data.size())));
  source->setShuffle(shuffle, seed);
  return source;
}

History Session::fit(DataSource &train, DataSource *validation,
                     const FitArgs &args, std::vector<CallbackPtr> callbacks) {
  FitOptions fit;
  fit.epochs = args.epochs;
  fit.initialEpoch = args.initialEpoch;
  fit.batchSize = args.batchSize;
  fit.shuffle = args.shuffle;
  fit.seed = args.seed;
  fit.verbose = 0; // Keras's own ProgbarLogger prints, from Python
  fit.stepsPerEpoch = args.stepsPerEpoch;
  fit.validationFreq = args.validationFreq;
  fit.validationEpochs = args.validationEpochs;
  fit.callbacks = std::move(callbacks);
  return trainer(args.classWeight).fit(train, fit, validation);
}

Logs Session::evaluate(const DataSource &data,
                       const std::vector<CallbackPtr> &callbacks) {
  return trainer().evaluate(data, callbacks);
}

std::vector<NDArray>
Session::predict(const std::vector<NDArray> &inputs, int64_t batchSize,
                 const std::vector<CallbackPtr> &callbacks) {
  std::vector<NDArray> cast;
  std::vector<DType> types = imported_.model->inputDTypes();
  for (size_t i = 0; i < inputs.size(); ++i)
    cast.push_back(i < types.size() && inputs[i].dtype() != types[i]
                       ? inputs[i].to(types[i])
                       : inputs[i]);
  // A model kcc cannot train (or never compiled) still predicts: a
  // Trainer of Keras's default compile serves @forward.
  if (!trainer_ && training_ && imported_.trainingError.empty())
    trainer();
  if (!trainer_) {
    TrainingConfig config;
    config.mode = mode_;
    trainer_ = std::make_unique<Trainer>(*imported_.model, config, nullptr);
  }
  return trainer_->predict(cast, batchSize, callbacks);
}

Logs Session::trainOnBatch(const Examples &data,
                           const std::map<int64_t, double> &classWeight) {
  Trainer &t = trainer(classWeight);
  Batch b = arraySource(data, data.size())->batch(0);
  StepResult r = b.inputs.empty() && b.targets.empty()
                     ? t.trainOnBatch(b.x, b.y, b.sampleWeight)
                     : t.trainOnBatch(b.inputs, b.targets, b.sampleWeight);
  Logs logs;
  logs["loss"] = r.loss;
  const std::vector<std::string> &names = t.executable()->metricNames();
  for (size_t i = 0; i < names.size() && i < r.metrics.size(); ++i)
    logs[names[i]] = r.metrics[i];
  return logs;
}

double Session::timeSteps(const Examples &data, int64_t steps, int64_t warmup) {
  Trainer &t = trainer();
  Batch b = arraySource(data, data.size())->batch(0);
  auto step = [&] {
    if (b.inputs.empty() && b.targets.empty())
      t.trainOnBatch(b.x, b.y, b.sampleWeight);
    else
      t.trainOnBatch(b.inputs, b.targets, b.sampleWeight);
  };
  for (int64_t i = 0; i < warmup; ++i)
    step();
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i)
    step();
  std::chrono::duration<double> elapsed =
      std::chrono::steady_clock::now() - start;
  return steps ? elapsed.count() / steps : 0;
}
