//===- Trainer.cpp - compile() and fit() for frontend models --------------===//

#include "frontend/training/Trainer.h"

#include "frontend/Trace.h"
#include "passes/Losses.h"
#include "passes/Optimizers.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>

namespace kcc {

/// A traced and compiled module and the function to run.
struct Trainer::Compiled {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  TrainStepLayout layout; // train step only
};

Trainer::Trainer(Model &model, CompileOptions options)
    : model_(model), options_(std::move(options)) {
  std::optional<LossKind> loss = parseLoss(options_.loss);
  if (!loss)
    throw Error("compile: unknown loss '" + options_.loss + "'");
  std::optional<OptimizerKind> opt = parseOptimizer(options_.optimizer);
  if (!opt)
    throw Error("compile: unknown optimizer '" + options_.optimizer + "'");
  for (const std::string &m : options_.metrics)
    if (!parseMetric(m, *loss))
      throw Error("compile: unknown metric '" + m + "' for loss " +
                  options_.loss);
  learningRate_ = options_.learningRate.value_or(defaultLearningRate(*opt));
  context_ = std::make_unique<mlir::MLIRContext>();
  registerFrontendDialects(*context_);
  interpreter_ = std::make_unique<Interpreter>();
}

Trainer::~Trainer() { interpreter_->clearConstantCache(); }

const InterpreterStats &Trainer::stats() const { return interpreter_->stats(); }

std::string Trainer::trainModuleText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (train_)
    train_->module->print(os);
  return text;
}

void Trainer::compileTrainStep(int64_t batchSize) {
  if (train_ && train_->layout.numInputs &&
      mlir::cast<mlir::RankedTensorType>(
          train_->func.getArgument(train_->layout.firstInputArg()).getType())
              .getDimSize(0) == batchSize)
    return;
  auto compiled = std::make_unique<Compiled>();
  TraceOptions trace;
  trace.batch = batchSize;
  trace.training = true;
  compiled->module = traceForward(*context_, model_, trace);

  KcBuildTrainStepOptions pass;
  pass.loss = options_.loss;
  pass.fromLogits = options_.fromLogits;
  pass.optimizer = options_.optimizer;
  pass.momentum = options_.momentum;
  pass.nesterov = options_.nesterov;
  pass.beta1 = options_.beta1;
  pass.beta2 = options_.beta2;
  pass.epsilon = options_.epsilon;
  pass.rho = options_.rho;
  pass.metrics = options_.metrics;
  std::string diagnostics;
  {
    // Collect the pipeline's diagnostics into the kcc::Error message.
    mlir::ScopedDiagnosticHandler handler(
        context_.get(), [&](mlir::Diagnostic &d) {
          diagnostics += d.str() + "\n";
          return mlir::success();
        });
    mlir::PassManager pm(context_.get());
    buildTrainPipeline(pm, pass);
    if (mlir::failed(pm.run(*compiled->module)))
      throw Error("compile: building the train step of model '" +
                  model_.name() + "' failed:\n" + diagnostics);
  }
  compiled->func =
      compiled->module->lookupSymbol<mlir::func::FuncOp>("train_step");
  std::optional<TrainStepLayout> layout = getTrainStepLayout(compiled->func);
  if (!layout)
    throw Error("compile: @train_step has no valid kc.train_step layout");
  compiled->layout = *layout;

  // Fresh optimizer state (Keras builds it zeroed on the first step).
  if (state_.empty())
    for (unsigned i = 0; i < layout->numOptimizerState; ++i) {
      auto t = mlir::cast<mlir::RankedTensorType>(
          compiled->func.getArgument(layout->numParams + i).getType());
      state_.push_back(NDArray::zeros(
          Shape(t.getShape().begin(), t.getShape().end()),
          dtypeOf(t.getElementType())));
    }
  train_ = std::move(compiled);
}

Trainer::Compiled &Trainer::inferenceFunction(int64_t batchSize) {
  std::unique_ptr<Compiled> &slot = inference_[batchSize];
  if (!slot) {
    slot = std::make_unique<Compiled>();
    TraceOptions trace;
    trace.batch = batchSize;
    slot->module = traceForward(*context_, model_, trace);
    slot->func = slot->module->lookupSymbol<mlir::func::FuncOp>(trace.funcName);
  }
  return *slot;
}

std::vector<EpochLogs> Trainer::fit(const Dataset &train,
                                    const FitOptions &fit) {
  if (train.size() < fit.batchSize)
    throw Error("fit: " + std::to_string(train.size()) +
                " examples are fewer than one batch of " +
                std::to_string(fit.batchSize));
  compileTrainStep(fit.batchSize);
  const TrainStepLayout &layout = train_->layout;
  params_ = model_.getWeights();
  if (params_.size() != layout.numParams)
    throw Error("fit: the model has " + std::to_string(params_.size()) +
                " weights but @train_step takes " +
                std::to_string(layout.numParams));

  BatchIterator batches(train, fit.batchSize, fit.shuffle, fit.seed);
  std::vector<EpochLogs> history;
  std::vector<NDArray> args(layout.targetArg() + 1);
  for (int64_t epoch = 0; epoch < fit.epochs; ++epoch) {
    auto start = std::chrono::steady_clock::now();
    batches.startEpoch(epoch);
    std::vector<double> sums(layout.firstParamResult(), 0.0);
    NDArray x, y;
    for (int64_t b = 0; b < batches.numBatches(); ++b) {
      batches.batch(b, x, y);
      // Params and state move into the argument list and come back as
      // results, so no step copies them.
      for (unsigned i = 0; i < layout.numParams; ++i)
        args[i] = std::move(params_[i]);
      for (unsigned i = 0; i < layout.numOptimizerState; ++i)
        args[layout.numParams + i] = std::move(state_[i]);
      args[layout.iterationsArg()] =
          NDArray::scalar(static_cast<double>(iterations_), DType::I64);
      args[layout.learningRateArg()] = NDArray::scalar(learningRate_);
      args[layout.firstInputArg()] = x;
      args[layout.targetArg()] = y;
      std::vector<NDArray> results = interpreter_->run(train_->func, args);
      for (unsigned i = 0; i < sums.size(); ++i)
        sums[i] += results[i].at(0);
      for (unsigned i = 0; i < layout.numParams; ++i)
        params_[i] = std::move(results[layout.firstParamResult() + i]);
      for (unsigned i = 0; i < layout.numOptimizerState; ++i)
        state_[i] = std::move(results[layout.firstStateResult() + i]);
      iterations_ =
          static_cast<int64_t>(results[layout.iterationsResult()].at(0));
    }
    model_.setWeights(params_);

    EpochLogs logs;
    logs.steps = batches.numBatches();
    logs.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    logs.values["loss"] = sums[0] / logs.steps;
    for (unsigned i = 0; i < layout.metrics.size(); ++i)
      logs.values[layout.metrics[i]] = sums[1 + i] / logs.steps;
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
  std::vector<NDArray> weights = model_.getWeights();
  int64_t n = data.size(), correct = 0;
  // Full batches, then the remainder with a function traced at its size, so
  // every example counts (a compiled function has a static batch).
  auto runBatch = [&](int64_t size, const NDArray &x, const NDArray &y) {
    std::vector<NDArray> args = weights;
    args.push_back(x);
    Compiled &f = inferenceFunction(size);
    NDArray pred = interpreter_->run(f.func, args).at(0);
    int64_t classes = pred.numel() / size;
    for (int64_t i = 0; i < size; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < classes; ++j)
        if (pred.at(i * classes + j) > pred.at(i * classes + best))
          best = j;
      correct += best == static_cast<int64_t>(y.at(i));
    }
  };
  int64_t full = std::min(batchSize, n);
  BatchIterator batches(data, full, /*shuffle=*/false, 0);
  batches.startEpoch(0);
  NDArray x, y;
  for (int64_t b = 0; b < batches.numBatches(); ++b) {
    batches.batch(b, x, y);
    runBatch(full, x, y);
  }
  int64_t done = batches.numBatches() * full;
  if (int64_t rest = n - done) {
    Dataset tail;
    Shape xs = data.x.shape(), ys = data.y.shape();
    xs[0] = ys[0] = rest;
    int64_t xRow = data.x.numel() / n, yRow = data.y.numel() / n;
    tail.x = NDArray::empty(xs, data.x.dtype());
    tail.y = NDArray::empty(ys, data.y.dtype());
    for (int64_t k = 0; k < rest * xRow; ++k)
      tail.x.set(k, data.x.at(done * xRow + k));
    for (int64_t k = 0; k < rest * yRow; ++k)
      tail.y.set(k, data.y.at(done * yRow + k));
    runBatch(rest, tail.x, tail.y);
  }
  return {{"accuracy", static_cast<double>(correct) / n}};
}

} // namespace kcc
