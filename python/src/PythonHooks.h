//===- PythonHooks.h - fit()'s callbacks, forwarded to Python ---*- C++ -*-===//
//
// The one C++ callback kcc.fit, kcc.evaluate and kcc.predict pass to the
// Trainer. It forwards the train, epoch, test and predict hooks to a
// Python driver object (which runs Keras's CallbackList and moves the
// weights into the Keras model), and each run's batch hooks only when a
// Python callback overrides them, so a step costs no Python beyond what
// the user asked for. Keras's progress bar alone gets a batch's end at most
// every 50 ms (and each run's first): Keras's Progbar redraws no more
// often, and its last line is drawn from the end's logs; at verbose=2 it
// draws only that line, so only the first batch's end (which starts its
// step clock) goes. Each hook takes
// the GIL for its call; the driver's hooks return True to stop (Keras's
// model.stop_training, stop_evaluating, stop_predicting). A pending Ctrl-C
// becomes a KeyboardInterrupt raised at the next batch boundary after it:
// without batch hooks the GIL is taken to look at most every 20 ms, not at
// every step.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PYTHON_PYTHONHOOKS_H
#define KCC_PYTHON_PYTHONHOOKS_H

#include "frontend/training/Callbacks.h"

#include <pybind11/pybind11.h>

#include <chrono>
#include <string>
#include <vector>

namespace kcc {
namespace python {

/// Keras's logs dict: floats, a list for a metric that logs several.
pybind11::dict logsToDict(const Logs &logs);

/// Which batch hooks of a run reach Python.
enum class BatchHooks {
  None,     ///< none (a Ctrl-C is still looked for every 20 ms)
  Every,    ///< both, at every batch: a Python callback overrides them
  Progress, ///< the batch ends, for Keras's progress bar, throttled
  First,    ///< the first batch's end only (Keras's verbose=2 line)
};

/// "none", "every", "progress" or "first"; `what` names the argument in
/// the error.
BatchHooks batchHooksOf(const std::string &name, const std::string &what);

/// The batch hooks of each kind of run.
struct BatchHookModes {
  BatchHooks train = BatchHooks::None;
  BatchHooks test = BatchHooks::None;
  BatchHooks predict = BatchHooks::None;
};

class PythonHooks : public Callback {
public:
  /// `driver` has on_train_begin(), on_epoch_begin(epoch),
  /// on_epoch_end(epoch, logs), on_train_end(logs), on_test_begin(),
  /// on_test_end(logs), on_predict_begin(), on_predict_end() and, as
  /// `modes` says, on_{train,test}_batch_begin(batch),
  /// on_{train,test}_batch_end(batch, logs), on_predict_batch_begin(batch)
  /// and on_predict_batch_end(batch, outputs).
  PythonHooks(pybind11::object driver, BatchHookModes modes);
  ~PythonHooks() override;

  void onTrainBegin(Logs &logs) override;
  void onTrainEnd(Logs &logs) override;
  void onEpochBegin(int64_t epoch, Logs &logs) override;
  void onEpochEnd(int64_t epoch, Logs &logs) override;
  void onBatchBegin(int64_t batch, Logs &logs) override;
  void onBatchEnd(int64_t batch, Logs &logs) override;
  void onTestBegin(Logs &logs) override;
  void onTestEnd(Logs &logs) override;
  void onTestBatchBegin(int64_t batch, Logs &logs) override;
  void onTestBatchEnd(int64_t batch, Logs &logs) override;
  void onPredictBegin(Logs &logs) override;
  void onPredictEnd(Logs &logs) override;
  void onPredictBatchBegin(int64_t batch, Logs &logs) override;
  void onPredictBatchEnd(int64_t batch,
                         const std::vector<NDArray> &outputs) override;

private:
  /// A hook's result: true sets `stop`.
  static void stopIf(const pybind11::object &result, bool &stop);
  /// Calls `hook` (with the GIL held) when `mode` forwards this batch's
  /// end; otherwise only looks for a pending Ctrl-C, every 20 ms.
  template <typename Hook>
  void batchEnd(BatchHooks mode, int64_t batch, Hook hook);

  pybind11::object driver_;
  BatchHookModes modes_;
  std::chrono::steady_clock::time_point lastSignalCheck_;
  std::chrono::steady_clock::time_point lastProgress_;
};

} // namespace python
} // namespace kcc

#endif // KCC_PYTHON_PYTHONHOOKS_H
