//===- Session.h - One Keras model trained by kcc ---------------*- C++ -*-===//
//
// What the Python package keeps per keras.Model: the model imported from
// its config (to_json() plus compile_config) or a .keras file, and the
// Trainer that trains it. Keras's model is the truth between calls: each
// call starts from the weights and optimizer variables it hands over in
// Keras's order (keras/KerasVariables.h) and gives them back the same way.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PYTHON_SESSION_H
#define KCC_PYTHON_SESSION_H

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace python {

/// fit()'s arguments with Keras's meaning, as the Python side resolved them
/// (validation_split already cut off the tail of the arrays).
struct FitArgs {
  int64_t batchSize = 32;
  int64_t validationBatchSize = 0;
  int64_t epochs = 1;
  int64_t initialEpoch = 0;
  int64_t stepsPerEpoch = 0;
  int64_t validationFreq = 1;
  std::vector<int64_t> validationEpochs;
  bool shuffle = true;
  uint64_t seed = 0;
  std::map<int64_t, double> classWeight;
};

class Session {
public:
  /// `mode`: "compiled" or "interpreted". `source` names the model in
  /// errors.
  Session(keras::ImportedModel imported, const std::string &mode,
          std::string source);

  std::vector<std::string> inputNames();
  std::vector<std::string> outputNames();

  /// Keras's model.weights values into the model (and a running step).
  void setKerasWeights(const std::vector<NDArray> &values);
  /// The current weights in Keras's model.weights order.
  std::vector<NDArray> kerasWeights();
  /// Keras's optimizer.variables after training, or none before a step.
  std::optional<std::vector<NDArray>> kerasOptimizerVariables();
  /// Continues from Keras's optimizer.variables (of a built optimizer).
  void setKerasOptimizerVariables(const std::vector<NDArray> &variables);
  /// Steps taken so far.
  int64_t iterations();

  /// The training configuration (throws the compile_config's error when
  /// kcc cannot train with it).
  const TrainingConfig &training() const;

  /// The Trainer for `classWeight` (built on first use; rebuilt, carrying
  /// the optimizer state, when the class weights change).
  Trainer &trainer(const std::map<int64_t, double> &classWeight);
  /// The current Trainer, whatever its class weights (built without).
  Trainer &trainer();

  /// Checked examples: one array per input, per output (or none).
  Examples examples(const std::vector<NDArray> &inputs,
                    const std::vector<NDArray> &targets,
                    const NDArray &sampleWeight, const std::string &what);

  /// What the step takes of each input and output.
  DataSpec dataSpec();
  /// Batches of `data` of `batchSize` rows, shuffled per epoch from `seed`
  /// when `shuffle`.
  std::unique_ptr<ArrayDataSource> arraySource(const Examples &data,
                                               int64_t batchSize,
                                               bool shuffle = false,
                                               uint64_t seed = 0);

  History fit(DataSource &train, DataSource *validation, const FitArgs &args,
              std::vector<CallbackPtr> callbacks);
  /// `callbacks` get the test (predict) hooks, as Trainer's.
  Logs evaluate(const DataSource &data,
                const std::vector<CallbackPtr> &callbacks = {});
  std::vector<NDArray> predict(const std::vector<NDArray> &inputs,
                               int64_t batchSize,
                               const std::vector<CallbackPtr> &callbacks = {});

  /// One training step on `data` (one batch of any size; Keras's
  /// train_on_batch): the batch's loss and metrics by name, and `rows`.
  Logs trainOnBatch(const Examples &data,
                    const std::map<int64_t, double> &classWeight);
  /// `steps` training steps on `data` after `warmup` untimed ones: the
  /// seconds per step (kcc bench's measure, in this session's mode).
  double timeSteps(const Examples &data, int64_t steps, int64_t warmup);

  const std::string &source() const { return source_; }
  keras::ImportedModel &imported() { return imported_; }

private:
  keras::ImportedModel imported_;
  std::string source_;
  ExecMode mode_;
  std::optional<TrainingConfig> training_;
  std::unique_ptr<Trainer> trainer_;
  std::map<int64_t, double> classWeight_;
};

} // namespace python
} // namespace kcc

#endif // KCC_PYTHON_SESSION_H
