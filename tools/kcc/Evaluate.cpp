//===- Evaluate.cpp - kcc evaluate: Keras's loss and metrics --------------===//
//
//   kcc evaluate MODEL --data D.npz
//
// The loss and metrics of the model's compile config (or the flags) over
// every example of D.npz, as Keras 3's evaluate() reports them: computed by
// the Trainer's evaluate (its @forward compiled or interpreted, the logs
// on the host by HostMetrics), so `kcc evaluate`, fit's validation and the
// C++ API report one set of numbers.
//
//===----------------------------------------------------------------------===//

#include "Diagnostics.h"
#include "ModelLoader.h"
#include "Run.h"

#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

using namespace kcc;
using namespace kcc::driver;

namespace {

/// A log value as kcc evaluate prints it: "%.6f", a list as
/// "[0.428571, 0.500000]".
std::string logText(const LogValue &value) {
  if (!value.isList())
    return llvm::formatv("{0:f6}", value.number()).str();
  std::string text = "[";
  for (auto [i, v] : llvm::enumerate(value.values()))
    text += llvm::formatv("{0}{1:f6}", i ? ", " : "", v).str();
  return text + "]";
}

/// The Trainer's evaluate over the data file's arrays by layer name
/// (UserData.h), the one place kcc computes Keras's evaluate() logs (also
/// fit's validation): a sample_weight weighs every output's loss as
/// Keras's evaluate(x, y, sample_weight) does. Keras's logs: loss first,
/// then the others by name; with --json one object whose "logs" hold
/// every value to double precision (a list metric as an array, as
/// Keras's evaluate(return_dict=True) gives its array).
int evaluateWithTrainer(Model &model, TrainingConfig training,
                        const PredictConfig &config) {
  DataSpec spec = dataSpecOf(model, training);
  Examples data = loadExamples(config.data, spec, &llvm::errs());
  int64_t batch = std::min<int64_t>(config.source.batch, data.size());
  training.batch = batch;
  training.mode = config.mode;
  Trainer trainer(model, training, /*log=*/nullptr);
  Logs logs = trainer.evaluate(*dataSourceOf(data, spec, batch));
  if (config.json) {
    llvm::json::Object values;
    for (const auto &[name, value] : logs) {
      if (!value.isList()) {
        values[name] = value.number();
        continue;
      }
      llvm::json::Array list;
      for (double v : value.values())
        list.push_back(v);
      values[name] = std::move(list);
    }
    llvm::json::Object out{{"examples", data.size()},
                           {"data", config.data},
                           {"weighted", data.sampleWeight.defined()},
                           {"logs", std::move(values)}};
    llvm::outs() << llvm::formatv("{0:2}", llvm::json::Value(std::move(out)))
                 << "\n";
    return 0;
  }
  std::string line = "loss: " + logText(logs["loss"]);
  for (const auto &[name, value] : logs)
    if (name != "loss")
      line += " - " + name + ": " + logText(value);
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
  // The metrics are resolved before any data is read: a bad name fails
  // fast.
  for (const std::string &name : training->metrics)
    if (llvm::Expected<MetricKind> kind =
            parseMetric(name, training->loss.kind);
        !kind)
      return fail(kind.takeError());
  return evaluateWithTrainer(*loaded->model, *training, config);
}
