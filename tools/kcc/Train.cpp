//===- Train.cpp - kcc train ----------------------------------------------===//
//
//   kcc train --model=mlp --data fashion-mnist --epochs 2 --batch 32
//   Epoch 1/2
//   1875/1875 [==============================] - 12s 6ms/step - loss: 0.4855 -
//   accuracy: 0.8270
//   ...
//   test accuracy: 0.8512
//
// The bar redraws in place on a terminal; otherwise (a pipe, a log) only the
// finished line of each epoch is printed, so logs stay readable.
//
// --mode=both compares the two runs' final losses and accuracies; one run
// finite where the other is not is an error. --terminate-on-nan stops at the
// first step whose loss is NaN or inf (Keras's TerminateOnNaN) and re-runs
// that step op by op to name the layer where the first non-finite value
// appears.
//
//===----------------------------------------------------------------------===//

#include "Diagnostics.h"
#include "ModelLoader.h"
#include "Run.h"

#include "engine/NumericsCheck.h"
#include "frontend/Trace.h"
#include "frontend/training/Jit.h"
#include "runtime/Error.h"
#include "runtime/data/Dataset.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace kcc;
using namespace kcc::driver;

namespace {

using Clock = std::chrono::steady_clock;

/// A loss as Keras prints it: "%.4f", and "nan" whatever the NaN's sign.
std::string lossText(double loss) {
  if (std::isnan(loss))
    return "nan";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.4f", loss);
  return text;
}

/// Keras's per-epoch line: "37/1875 [>.....] - ETA: 12s - loss: ..." while
/// running, "1875/1875 [=====] - 12s 6ms/step - loss: ..." when done.
class ProgressBar {
public:
  ProgressBar(llvm::raw_ostream &os, int64_t total)
      : os_(os), total_(total), live_(os.is_displayed()), start_(Clock::now()),
        lastDraw_(start_) {}

  void update(int64_t done, double loss,
              const std::vector<std::pair<std::string, double>> &metrics) {
    bool finished = done == total_;
    auto now = Clock::now();
    if (!finished &&
        (!live_ || now - lastDraw_ < std::chrono::milliseconds(100)))
      return;
    lastDraw_ = now;
    double seconds = std::chrono::duration<double>(now - start_).count();
    constexpr int width = 30;
    int filled = static_cast<int>(width * done / std::max<int64_t>(1, total_));
    std::string bar(filled, '=');
    if (filled < width) {
      bar += '>';
      bar += std::string(width - filled - 1, '.');
    }
    int digits = std::to_string(total_).size();
    if (live_)
      os_ << '\r';
    os_ << llvm::format_decimal(done, digits) << "/" << total_ << " [" << bar
        << "] - ";
    if (finished)
      os_ << llvm::format("%.0fs %.0fms/step", seconds,
                          1e3 * seconds / std::max<int64_t>(1, done));
    else
      os_ << "ETA: "
          << llvm::format("%.0fs", seconds / std::max<int64_t>(1, done) *
                                       (total_ - done));
    os_ << " - loss: " << lossText(loss);
    for (const auto &[name, value] : metrics)
      os_ << " - " << name << ": " << llvm::format("%.4f", value);
    if (finished)
      os_ << '\n';
    else
      os_ << "\x1b[K"; // clear what a longer line left behind
    os_.flush();
  }

private:
  llvm::raw_ostream &os_;
  int64_t total_;
  bool live_;
  Clock::time_point start_, lastDraw_;
};

/// Share of rows of `scores` [N, classes] whose argmax is the label.
double accuracy(const NDArray &scores, const NDArray &labels) {
  int64_t n = scores.dim(0), classes = scores.numel() / n, correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (scores.at(i * classes + j) > scores.at(i * classes + best))
        best = j;
    correct += best == static_cast<int64_t>(labels.at(i));
  }
  return static_cast<double>(correct) / n;
}

/// What one training run measured.
struct RunResult {
  double testAccuracy = 0;
  double msPerStep = 0;
  /// The mean loss of the last epoch run, as the progress bar shows it.
  double finalLoss = 0;
  /// --terminate-on-nan stopped the run.
  bool terminated = false;
};

/// The step that made the loss non-finite, re-run op by op from the inputs
/// it started from: prints where the first NaN or inf appears.
void reportNonFiniteStep(const LoadedModel &loaded,
                         const TrainingConfig &training,
                         const StepInputs &before, const NDArray &x,
                         const NDArray &y) {
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildTrainModule(ctx, *loaded.model, training);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  std::optional<NonFiniteOp> first =
      step ? checkTrainStep(step, before, x, y) : std::nullopt;
  if (first)
    llvm::WithColor::note(llvm::errs(), "kcc")
        << "first non-finite value: " << first->describe() << "\n";
  else
    llvm::WithColor::note(llvm::errs(), "kcc")
        << "the interpreter computes this step with finite values only: the "
           "non-finite loss comes from the compiled step\n";
}

/// Trains a freshly loaded model (so every mode starts from the same
/// initial weights) in `mode` and evaluates it on the test split.
llvm::Expected<RunResult> trainOnce(const TrainConfig &config, ExecMode mode,
                                    const FashionMnist &data) {
  auto loaded = loadModel(config.source);
  if (!loaded)
    return loaded.takeError();
  auto training = resolveTrainingConfig(*loaded, config.source,
                                        /*defaultMetrics=*/{"accuracy"});
  if (!training)
    return training.takeError();
  training->mode = mode;
  Executable exe = jit(*loaded->model, *training);
  llvm::outs() << "kcc: training " << loaded->name << " ("
               << execModeName(exe.mode()) << ", batch " << exe.batchSize()
               << ", " << optimizerName(training->optimizer.kind) << ", "
               << lossName(training->loss.kind) << ") on " << data.train.size()
               << " examples\n";

  BatchIterator batches(data.train, exe.batchSize(), /*shuffle=*/true,
                        config.source.seed);
  int64_t steps = batches.numBatches();
  if (config.stepsPerEpoch > 0)
    steps = std::min(steps, config.stepsPerEpoch);
  NDArray x, y;
  double stepSeconds = 0, finalLoss = 0;
  for (int64_t epoch = 0; epoch < config.epochs; ++epoch) {
    llvm::outs() << "Epoch " << epoch + 1 << "/" << config.epochs << "\n";
    batches.startEpoch(epoch);
    ProgressBar bar(llvm::outs(), steps);
    double lossSum = 0;
    std::vector<double> metricSums(exe.metricNames().size(), 0.0);
    std::vector<std::pair<std::string, double>> means;
    for (int64_t b = 0; b < steps; ++b) {
      batches.batch(b, x, y);
      std::optional<StepInputs> before;
      if (config.terminateOnNan)
        before = captureStepInputs(exe);
      auto start = Clock::now();
      StepResult r = exe.step(x, y);
      stepSeconds +=
          std::chrono::duration<double>(Clock::now() - start).count();
      if (before && !std::isfinite(r.loss)) {
        llvm::outs() << "\n";
        llvm::WithColor::error(llvm::errs(), "kcc")
            << "step " << before->iterations + 1 << " (epoch " << epoch + 1
            << ", batch " << b + 1 << "/" << steps << ", "
            << execModeName(exe.mode()) << "): loss is "
            << (std::isnan(r.loss) ? "nan" : "inf")
            << "; terminating training (--terminate-on-nan)\n";
        reportNonFiniteStep(*loaded, *training, *before, x, y);
        RunResult stopped;
        stopped.finalLoss = r.loss;
        stopped.terminated = true;
        return stopped;
      }
      lossSum += r.loss;
      means.clear();
      for (size_t i = 0; i < metricSums.size(); ++i) {
        metricSums[i] += r.metrics[i];
        means.emplace_back(exe.metricNames()[i], metricSums[i] / (b + 1));
      }
      bar.update(b + 1, lossSum / (b + 1), means);
    }
    finalLoss = lossSum / std::max<int64_t>(1, steps);
  }
  RunResult result;
  result.finalLoss = finalLoss;
  result.testAccuracy = accuracy(exe.predict(data.test.x), data.test.y);
  result.msPerStep =
      1e3 * stepSeconds / std::max<int64_t>(1, steps * config.epochs);
  llvm::outs() << "test accuracy: " << llvm::format("%.4f", result.testAccuracy)
               << " (" << data.test.size() << " examples)\n";
  return result;
}

/// The --mode=both summary; false when one run's loss is finite and the
/// other's is not (the compiled step must never hide a NaN, nor make one).
bool compareRuns(const TrainConfig &config,
                 const std::vector<RunResult> &results) {
  // The step time excludes compilation (done before the first step) and
  // data loading; both runs saw the same batches in the same order.
  llvm::outs() << "\nsame initial weights, same batches:\n";
  for (size_t i = 0; i < 2; ++i) {
    std::string name = std::string(execModeName(config.modes[i])) + ":";
    llvm::outs() << llvm::format("  %-12s loss %-10s ", name.c_str(),
                                 lossText(results[i].finalLoss).c_str());
    if (results[i].terminated)
      llvm::outs() << "(terminated on a non-finite loss)\n";
    else
      llvm::outs() << llvm::format("test accuracy %.4f  %8.3f ms/step\n",
                                   results[i].testAccuracy,
                                   results[i].msPerStep);
  }
  double l0 = results[0].finalLoss, l1 = results[1].finalLoss;
  bool finite0 = std::isfinite(l0), finite1 = std::isfinite(l1);
  if (finite0 != finite1) {
    llvm::WithColor::error(llvm::errs(), "kcc")
        << "the final losses disagree on finiteness: "
        << execModeName(config.modes[0]) << " " << lossText(l0) << ", "
        << execModeName(config.modes[1]) << " " << lossText(l1) << "\n";
    return false;
  }
  if (results[0].terminated || results[1].terminated)
    return true;
  llvm::outs() << llvm::format(
      "  interpreted / compiled time per step: %.2fx; accuracy differs "
      "by %.2f points; ",
      results[1].msPerStep / results[0].msPerStep,
      100 * std::abs(results[0].testAccuracy - results[1].testAccuracy));
  if (finite0)
    llvm::outs() << llvm::format("loss by %.2g (relative)\n",
                                 std::abs(l0 - l1) /
                                     std::max(1e-12, std::abs(l1)));
  else
    llvm::outs() << "both losses are non-finite\n";
  return true;
}

} // namespace

int driver::runTrain(const TrainConfig &config) {
  if (isMlirInput(config.source) && !config.source.input.empty())
    return fail("kcc train needs a model with weights: a Keras spec (.json, "
                ".keras, .h5) or --model=mlp|cnn|residual, not " +
                config.source.input);
  if (config.data != "fashion-mnist")
    return fail("unknown --data '" + config.data +
                "' (kcc knows fashion-mnist)");

  try {
    FashionMnist data = loadFashionMnist(
        config.dataDir.empty() ? defaultFashionMnistDir() : config.dataDir);
    std::vector<RunResult> results;
    bool terminated = false;
    for (ExecMode mode : config.modes) {
      auto result = trainOnce(config, mode, data);
      if (!result)
        return fail(llvm::toString(result.takeError()));
      results.push_back(*result);
      terminated |= result->terminated;
    }
    int status = terminated ? 1 : 0;
    if (results.size() == 2 && !compareRuns(config, results))
      status = 1;
    return status;
  } catch (const Error &e) {
    return fail(e.what());
  }
}
