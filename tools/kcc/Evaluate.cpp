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

#include "llvm/Support/FormatVariadic.h"

using namespace kcc;
using namespace kcc::driver;

namespace {

/// The Trainer's evaluate over the data file's arrays by layer name
/// (UserData.h), the one place kcc computes Keras's evaluate() logs (also
/// fit's validation): a sample_weight weighs every output's loss as
/// Keras's evaluate(x, y, sample_weight) does. Keras's logs: loss first,
/// then the others by name.
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
  // The metrics are resolved before any data is read: a bad name fails
  // fast.
  for (const std::string &name : training->metrics)
    if (llvm::Expected<MetricKind> kind =
            parseMetric(name, training->loss.kind);
        !kind)
      return fail(kind.takeError());
  return evaluateWithTrainer(*loaded->model, *training, config);
}
