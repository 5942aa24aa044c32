//===- Callbacks.h - Keras's callbacks for Trainer::fit ---------*- C++ -*-===//
//
// A Callback sees fit() as Keras's keras.callbacks.Callback does: hooks at
// the start and end of training, of each epoch and of each batch, with the
// logs dict (loss and metrics, running means of the epoch at batch ends;
// the epoch's means and val_* at epoch ends), and evaluate()'s and
// predict()'s hooks (the validation's inside fit()). Through trainer() a
// callback can stop training (Trainer::stopTraining, Keras's
// model.stop_training; stopEvaluating and stopPredicting likewise), read
// and change the learning rate, and get or set the weights.
//
// Built in, with Keras 3's arguments and rules (keras/src/callbacks):
//   History          the logs of every epoch; fit() returns one
//   ProgbarLogger    the progress bar (verbose 1) or one line per epoch (2)
//   TerminateOnNaN   stops at the first batch whose loss is NaN or inf
//   EarlyStopping    stops when the monitored value stops improving
//   ReduceLROnPlateau  divides the learning rate on a plateau
//   CSVLogger        one row per epoch: epoch, then the logs' keys, sorted
//   ModelCheckpoint  saves through a function the caller supplies
//
//   auto stop = std::make_shared<EarlyStopping>(EarlyStopping::Options{
//       .monitor = "val_loss", .patience = 3, .restoreBestWeights = true});
//   fit.callbacks = {stop};
//   History h = trainer.fit(train, fit, &validation);
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_CALLBACKS_H
#define KCC_FRONTEND_TRAINING_CALLBACKS_H

#include "frontend/training/LogValue.h"
#include "runtime/NDArray.h"

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace kcc {

class Trainer;

/// Keras's logs: "loss", metric names, "val_loss", ...; a metric with
/// several thresholds or classes logs a list (LogValue).
using Logs = std::map<std::string, LogValue>;

class Callback {
public:
  virtual ~Callback();
  virtual void onTrainBegin(Logs &logs) {}
  virtual void onTrainEnd(Logs &logs) {}
  virtual void onEpochBegin(int64_t epoch, Logs &logs) {}
  virtual void onEpochEnd(int64_t epoch, Logs &logs) {}
  virtual void onBatchBegin(int64_t batch, Logs &logs) {}
  virtual void onBatchEnd(int64_t batch, Logs &logs) {}
  /// evaluate() and fit()'s validation, as Keras's on_test_*: the batch
  /// ends get the running loss and metrics over the batches so far, the
  /// end the result (keys without "val_").
  virtual void onTestBegin(Logs &logs) {}
  virtual void onTestEnd(Logs &logs) {}
  virtual void onTestBatchBegin(int64_t batch, Logs &logs) {}
  virtual void onTestBatchEnd(int64_t batch, Logs &logs) {}
  /// predict(), as Keras's on_predict_*: a batch's end gets its outputs
  /// (Keras's logs["outputs"]), one array per model output.
  virtual void onPredictBegin(Logs &logs) {}
  virtual void onPredictEnd(Logs &logs) {}
  virtual void onPredictBatchBegin(int64_t batch, Logs &logs) {}
  virtual void onPredictBatchEnd(int64_t batch,
                                 const std::vector<NDArray> &outputs) {}

  /// Set by fit() before onTrainBegin (Keras's set_model).
  void setTrainer(Trainer *trainer) { trainer_ = trainer; }
  Trainer &trainer() const;

private:
  Trainer *trainer_ = nullptr;
};

using CallbackPtr = std::shared_ptr<Callback>;

/// One epoch's record.
struct EpochLogs {
  /// The epoch's means (loss, metrics) and val_* values.
  Logs values;
  int64_t steps = 0;
  /// Wall time of the epoch (steps, data waits and validation).
  double seconds = 0;
  /// Time in the training steps alone.
  double stepSeconds = 0;
};

/// Keras's History: history[key] holds one value per epoch run (a list
/// for a metric with several thresholds or classes, as Keras keeps its
/// array).
class History : public Callback {
public:
  std::vector<int64_t> epoch;
  std::map<std::string, std::vector<LogValue>> history;
  /// Steps and times per epoch, next to the logs.
  std::vector<EpochLogs> epochs;

  void onTrainBegin(Logs &) override;
  void onEpochEnd(int64_t e, Logs &logs) override;
  size_t size() const { return epoch.size(); }
};

/// "%.4f" of a value, or "nan"/"inf" as Keras prints them.
std::string formatLogValue(double value);

/// Keras's progress bar (a list shows its mean, as Keras's Progbar averages
/// an array). verbose 1: "37/1875 [>....] - ETA: 12s - loss: ..."
/// redrawn in place on a terminal, then "1875/1875 [=====] - 12s 6ms/step -
/// loss: ... - val_loss: ..." at the epoch's end; on a pipe only that last
/// line. verbose 2: "1875/1875 - 12s - 6ms/step - loss: ..." per epoch.
class ProgbarLogger : public Callback {
public:
  ProgbarLogger(llvm::raw_ostream &os, int verbose, int64_t epochs,
                int64_t stepsPerEpoch);
  void onEpochBegin(int64_t epoch, Logs &logs) override;
  void onBatchEnd(int64_t batch, Logs &logs) override;
  void onEpochEnd(int64_t epoch, Logs &logs) override;

private:
  void draw(int64_t done, const Logs &logs, bool finished);

  llvm::raw_ostream &os_;
  int verbose_;
  int64_t epochs_, steps_;
  int64_t seen_ = 0;
  bool live_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

/// Stops training at the end of the first batch whose loss is not finite.
/// Keras prints "Batch 3: Invalid loss, terminating training"; a subclass
/// may say more by overriding terminate().
class TerminateOnNaN : public Callback {
public:
  void onBatchEnd(int64_t batch, Logs &logs) override;
  /// The batch that stopped training, if one did.
  std::optional<int64_t> stoppedAtBatch;

protected:
  /// Reports the stop; `batch` is the epoch's batch index (from 0).
  virtual void terminate(int64_t batch, double loss);
};

/// "min", "max" or "auto" (Keras's `mode`).
enum class MonitorMode { Auto, Min, Max };

/// Whether `monitor` improves upward: Keras's "auto" rule (loss and errors
/// fall; accuracies and AUC rise). Throws kcc::Error naming the monitor when
/// the direction cannot be told, as Keras raises.
bool monitorIncreases(const std::string &monitor, MonitorMode mode,
                      const char *callback);

class EarlyStopping : public Callback {
public:
  struct Options {
    std::string monitor = "val_loss";
    double minDelta = 0;
    int64_t patience = 0;
    int verbose = 0;
    MonitorMode mode = MonitorMode::Auto;
    std::optional<double> baseline;
    bool restoreBestWeights = false;
    int64_t startFromEpoch = 0;
  };
  explicit EarlyStopping(Options options);
  void onTrainBegin(Logs &logs) override;
  void onEpochEnd(int64_t epoch, Logs &logs) override;
  void onTrainEnd(Logs &logs) override;

  /// The epoch (from 0) that stopped training, 0 when none did.
  int64_t stoppedEpoch = 0;
  int64_t bestEpoch = 0;
  double best = 0;
  int64_t wait = 0;

private:
  bool improves(double value, double reference) const;

  Options o_;
  bool increases_;
  std::optional<std::vector<NDArray>> bestWeights_;
};

class ReduceLROnPlateau : public Callback {
public:
  struct Options {
    std::string monitor = "val_loss";
    double factor = 0.1;
    int64_t patience = 10;
    int verbose = 0;
    MonitorMode mode = MonitorMode::Auto;
    double minDelta = 1e-4;
    int64_t cooldown = 0;
    double minLr = 0;
  };
  /// Throws kcc::Error when factor >= 1 (Keras raises).
  explicit ReduceLROnPlateau(Options options);
  void onTrainBegin(Logs &logs) override;
  void onEpochEnd(int64_t epoch, Logs &logs) override;

  double best = 0;
  int64_t wait = 0, cooldownCounter = 0;

private:
  Options o_;
  bool increases_;
};

/// Writes one row per epoch to a CSV file: "epoch" (from 0), then the keys
/// of the first epoch's logs, sorted; values as Python's str(float), a list
/// as Keras writes an array: the cell `"[0.42857143, 0.5]"` (LogValue::str
/// in quotes), which the csv module quotes again (`"""[...]"""`). Rows
/// end in "\r\n" like Python's csv module writes them. With `append`, adds
/// to an existing file and writes the header only when it is empty. The
/// file is opened at the start of training, so nothing is written when
/// training could not start.
class CSVLogger : public Callback {
public:
  CSVLogger(std::string filename, char separator = ',', bool append = false);
  void onTrainBegin(Logs &logs) override;
  void onEpochEnd(int64_t epoch, Logs &logs) override;
  void onTrainEnd(Logs &logs) override;

private:
  std::string filename_;
  char separator_;
  bool append_, writeHeader_ = true;
  std::ofstream file_;
  std::optional<std::vector<std::string>> keys_;
};

/// Saves the model at the end of each epoch through `save(path,
/// weightsOnly)`, which the caller supplies (kcc train: the .keras writer).
/// The path is `filepath` formatted with epoch (from 1) and the logs as
/// Python's str.format does ("ckpt-{epoch:02d}-{val_loss:.4f}.keras").
class ModelCheckpoint : public Callback {
public:
  using SaveFn = std::function<void(const std::string &path, bool weightsOnly)>;
  struct Options {
    std::string filepath;
    std::string monitor = "val_loss";
    int verbose = 0;
    bool saveBestOnly = false;
    bool saveWeightsOnly = false;
    MonitorMode mode = MonitorMode::Auto;
    std::optional<double> initialValueThreshold;
  };
  /// Throws kcc::Error as Keras raises: a filepath not ending in .keras
  /// (or .weights.h5 with saveWeightsOnly).
  ModelCheckpoint(Options options, SaveFn save);
  void onEpochEnd(int64_t epoch, Logs &logs) override;

  double best = 0;
  /// Every path saved, in order.
  std::vector<std::string> saved;

private:
  Options o_;
  SaveFn save_;
  bool increases_;
};

/// Python's str.format for a pattern whose fields name `values`, with
/// format specs ("{epoch:02d}", "{val_loss:.4f}", "{loss}", "{{"). Integer
/// specs (d) take the value's integer part; a field with no spec prints as
/// Python's str(): an integer as an int, others as the shortest repr.
/// Throws kcc::Error naming an unknown field or a malformed spec.
std::string formatPythonPattern(const std::string &pattern,
                                const std::map<std::string, double> &values,
                                const std::vector<std::string> &intKeys);

/// Python's repr of a float: the shortest digits that read back the same
/// ("0.1", "1.0", "1e-05", "nan", "inf").
std::string pythonFloatRepr(double value);
/// numpy's str of a float32, the same layout with a float32's shortest
/// digits ("0.42857143", "6.0").
std::string numpyFloat32Str(float value);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_CALLBACKS_H
