//===- Evaluate.cpp - kcc evaluate: Keras's loss and metrics --------------===//
//
//   kcc evaluate MODEL --data D.npz
//
// The loss and metrics of the model's compile config (or the flags) over
// every example of D.npz's x and y, as Keras 3's evaluate() reports them:
// the loss function on each example (probabilities clipped to [1e-7,
// 1 - 1e-7], or from logits), averaged over all examples (the last
// partial batch counts by its size, as Keras's Mean metric weighs it);
// accuracies by Keras's rules (argmax, or a 0.5 threshold for
// binary_accuracy). Computed in double from the model's float32 outputs.
//
//===----------------------------------------------------------------------===//

#include "Diagnostics.h"
#include "ModelLoader.h"
#include "PredictData.h"
#include "Run.h"

#include "frontend/training/Jit.h"
#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"
#include "runtime/Error.h"

#include "llvm/Support/FormatVariadic.h"
#include <cmath>

#include <cstdio>
#include <sstream>

using namespace kcc;
using namespace kcc::driver;

namespace {

constexpr double kEpsilon = 1e-7; // keras.config.epsilon()

double clip(double p) { return std::min(std::max(p, kEpsilon), 1 - kEpsilon); }

/// Row `i` of the predictions as probabilities (softmax of logits, or
/// normalized as Keras's categorical crossentropy does).
std::vector<double> probabilities(const NDArray &pred, int64_t i, int64_t k,
                                  bool fromLogits) {
  std::vector<double> p(k);
  double sum = 0, top = -INFINITY;
  for (int64_t j = 0; j < k; ++j)
    top = std::max(top, pred.at(i * k + j));
  for (int64_t j = 0; j < k; ++j) {
    p[j] = fromLogits ? std::exp(pred.at(i * k + j) - top) : pred.at(i * k + j);
    sum += p[j];
  }
  for (double &v : p)
    v /= sum;
  return p;
}

int64_t argmax(const NDArray &a, int64_t i, int64_t k) {
  int64_t best = 0;
  for (int64_t j = 1; j < k; ++j)
    if (a.at(i * k + j) > a.at(i * k + best))
      best = j;
  return best;
}

/// 10, 1.5: a label as NumPy prints it.
std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

double sigmoid(double z) { return 1 / (1 + std::exp(-z)); }

struct Totals {
  double loss = 0;
  std::vector<double> metrics;
};

/// Checks y against the predictions for `loss`: sparse labels are one
/// integer per example in [0, classes); other losses take y of the
/// prediction's shape.
void checkTargets(const NDArray &y, const Shape &pred, LossKind loss,
                  const std::string &path) {
  int64_t n = pred[0];
  if (y.shape().empty() || y.shape()[0] != n)
    throw Error(path + ": array 'y' has shape " + numpyShape(y.shape()) +
                " but x has " + std::to_string(n) + " examples");
  if (loss == LossKind::SparseCategoricalCrossentropy) {
    int64_t k = numElements(pred) / n;
    bool column = y.rank() == 2 && y.shape()[1] == 1;
    if (y.rank() != 1 && !column)
      throw Error(path + ": array 'y' has shape " + numpyShape(y.shape()) +
                  "; sparse_categorical_crossentropy takes one label per "
                  "example, (" +
                  std::to_string(n) + ",)");
    for (int64_t i = 0; i < n; ++i) {
      double label = y.at(i);
      if (label != std::floor(label) || label < 0 || label >= k)
        throw Error(path + ": array 'y' [" + std::to_string(i) + "] is " +
                    number(label) + ", outside the " + std::to_string(k) +
                    " classes [0, " + std::to_string(k) + ")");
    }
    return;
  }
  if (y.shape() != pred)
    throw Error(path + ": array 'y' has shape " + numpyShape(y.shape()) +
                " but the model's output is " + numpyShape(pred) + " for " +
                std::string(lossName(loss)));
}

Totals evaluate(const NDArray &pred, const NDArray &y,
                const TrainingConfig &config,
                const std::vector<MetricKind> &metrics) {
  int64_t n = pred.shape()[0], k = pred.numel() / n;
  const LossConfig &loss = config.loss;
  Totals t;
  t.metrics.assign(metrics.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    double l = 0;
    switch (loss.kind) {
    case LossKind::SparseCategoricalCrossentropy: {
      std::vector<double> p = probabilities(pred, i, k, loss.fromLogits);
      l = -std::log(loss.fromLogits ? p[int64_t(y.at(i))]
                                    : clip(p[int64_t(y.at(i))]));
      break;
    }
    case LossKind::CategoricalCrossentropy: {
      std::vector<double> p = probabilities(pred, i, k, loss.fromLogits);
      for (int64_t j = 0; j < k; ++j)
        l -= y.at(i * k + j) * std::log(loss.fromLogits ? p[j] : clip(p[j]));
      break;
    }
    case LossKind::BinaryCrossentropy:
      for (int64_t j = 0; j < k; ++j) {
        double z = pred.at(i * k + j), target = y.at(i * k + j);
        if (loss.fromLogits) {
          // max(z, 0) - z * y + log(1 + exp(-|z|)), as Keras's.
          l += std::max(z, 0.0) - z * target +
               std::log1p(std::exp(-std::fabs(z)));
        } else {
          double p = clip(z);
          l -= target * std::log(p) + (1 - target) * std::log(1 - p);
        }
      }
      l /= k;
      break;
    case LossKind::MeanSquaredError:
      for (int64_t j = 0; j < k; ++j) {
        double d = y.at(i * k + j) - pred.at(i * k + j);
        l += d * d;
      }
      l /= k;
      break;
    default:
      throw Error("kcc evaluate: loss '" + lossName(loss.kind).str() +
                  "' is not computed yet");
    }
    t.loss += l;
    for (size_t m = 0; m < metrics.size(); ++m) {
      double hit = 0;
      switch (metrics[m]) {
      case MetricKind::SparseCategoricalAccuracy:
        hit = argmax(pred, i, k) == static_cast<int64_t>(y.at(i));
        break;
      case MetricKind::CategoricalAccuracy:
        hit = argmax(pred, i, k) == argmax(y, i, k);
        break;
      case MetricKind::BinaryAccuracy:
        for (int64_t j = 0; j < k; ++j) {
          double p = pred.at(i * k + j);
          if (loss.fromLogits)
            p = sigmoid(p);
          hit += (p > 0.5) == (y.at(i * k + j) > 0.5);
        }
        hit /= k;
        break;
      case MetricKind::SparseTopKCategoricalAccuracy:
      case MetricKind::TopKCategoricalAccuracy: {
        // Keras's in_top_k: fewer than k classes score more than the target.
        int64_t cls = metrics[m] == MetricKind::TopKCategoricalAccuracy
                          ? argmax(y, i, k)
                          : static_cast<int64_t>(y.at(i));
        int64_t above = 0;
        for (int64_t j = 0; j < k; ++j)
          above += pred.at(i * k + j) > pred.at(i * k + cls);
        hit = above < kTopK;
        break;
      }
      case MetricKind::MeanAbsoluteError:
      case MetricKind::MeanSquaredError:
        for (int64_t j = 0; j < k; ++j) {
          double d = y.at(i * k + j) - pred.at(i * k + j);
          hit += metrics[m] == MetricKind::MeanSquaredError ? d * d
                                                            : std::fabs(d);
        }
        hit /= k;
        break;
      default:
        throw Error("kcc evaluate: this metric is not computed yet");
      }
      t.metrics[m] += hit;
    }
  }
  t.loss /= n;
  for (double &m : t.metrics)
    m /= n;
  return t;
}

/// A model of several inputs or outputs, or weighted data: the Trainer's
/// evaluate over the data file's arrays by layer name (UserData.h), its
/// sample_weight weighing every output's loss as Keras's evaluate(x, y,
/// sample_weight) does. Keras's logs: loss first, then the others by name.
int evaluateWithTrainer(Model &model, TrainingConfig training,
                        const PredictConfig &config) {
  DataSpec spec = dataSpecOf(model, training);
  Examples data = loadExamples(config.data, spec, &llvm::errs());
  int64_t batch = std::min<int64_t>(config.source.batch, data.size());
  training.batch = batch;
  training.mode = config.mode;
  Trainer trainer(model, training, /*log=*/nullptr);
  Logs logs = trainer.evaluate(*dataSourceOf(data, spec, batch));
  std::string line = llvm::formatv("loss: {0:f6}", logs["loss"]).str();
  for (const auto &[name, value] : logs)
    if (name != "loss")
      line += llvm::formatv(" - {0}: {1:f6}", name, value).str();
  llvm::outs() << data.size() << " examples of " << config.data
               << (data.sampleWeight.defined() ? " (weighted by sample_weight)"
                                               : "")
               << "\n"
               << line << "\n";
  return 0;
}

} // namespace

int driver::runEvaluate(const PredictConfig &config) {
  if (config.source.batch <= 0)
    return fail("--batch must be positive, got " +
                std::to_string(config.source.batch));
  llvm::Expected<LoadedModel> loaded = loadModel(config.source);
  if (!loaded)
    return fail(loaded.takeError());
  llvm::Expected<TrainingConfig> training =
      resolveTrainingConfig(*loaded, config.source, {});
  if (!training)
    return fail(training.takeError());
  std::vector<MetricKind> metrics;
  for (const std::string &name : training->metrics) {
    llvm::Expected<MetricKind> kind = parseMetric(name, training->loss.kind);
    if (!kind)
      return fail(kind.takeError());
    metrics.push_back(*kind);
  }
  Model &model = *loaded->model;
  if (model.numOutputs() != 1 || model.inputShapes().size() != 1)
    return evaluateWithTrainer(model, *training, config);
  std::map<std::string, NDArray> arrays = readDataFile(config.data);
  if (arrays.count("sample_weight"))
    return evaluateWithTrainer(model, *training, config);
  NDArray x = modelInput(model, arrays, config.data);
  auto y = arrays.find("y");
  if (y == arrays.end())
    return fail(config.data + ": no array 'y' (the targets)");
  int64_t rows = x.shape()[0];
  // The targets are checked against the output's shape before compiling.
  Shape predShape = model.graphOutputs()[0].shape();
  predShape[0] = rows;
  checkTargets(y->second, predShape, training->loss.kind, config.data);
  Executable exe =
      jitInference(model, std::min(config.source.batch, rows), config.mode);
  NDArray pred = exe.predict(x);
  Totals t = evaluate(pred, y->second, *training, metrics);
  std::string line = llvm::formatv("loss: {0:f6}", t.loss).str();
  for (size_t m = 0; m < metrics.size(); ++m)
    line += llvm::formatv(" - {0}: {1:f6}", training->metrics[m], t.metrics[m])
                .str();
  llvm::outs() << rows << " examples of " << config.data << "\n"
               << line << "\n";
  return 0;
}
