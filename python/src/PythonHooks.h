//===- PythonHooks.h - fit()'s callbacks, forwarded to Python ---*- C++ -*-===//
//
// The one C++ callback kcc.fit passes to Trainer::fit. It forwards the
// train and epoch hooks to a Python driver object (which runs Keras's
// CallbackList and moves the weights into the Keras model), and the batch
// hooks only when a Python callback overrides them, so a step costs no
// Python beyond what the user asked for. Keras's progress bar alone gets a
// batch's end at most every 50 ms (and each epoch's first): Keras's Progbar
// redraws no more often, and its epoch's last line is drawn from the
// epoch's logs. Each hook takes the GIL for its
// call; the driver's hooks return True to stop training (Keras's
// model.stop_training). A pending Ctrl-C becomes a KeyboardInterrupt raised
// out of fit() at the next step boundary after it: without batch hooks the
// GIL is taken to look at most every 20 ms, not at every step.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PYTHON_PYTHONHOOKS_H
#define KCC_PYTHON_PYTHONHOOKS_H

#include "frontend/training/Callbacks.h"

#include <pybind11/pybind11.h>

#include <chrono>

namespace kcc {
namespace python {

/// Keras's logs dict: floats, a list for a metric that logs several.
pybind11::dict logsToDict(const Logs &logs);

/// Which batch hooks reach Python.
enum class BatchHooks {
  None,     ///< none (a Ctrl-C is still looked for every 20 ms)
  Every,    ///< both, at every batch: a Python callback overrides them
  Progress, ///< on_train_batch_end for Keras's progress bar, throttled
};

class PythonHooks : public Callback {
public:
  /// `driver` has on_train_begin(), on_epoch_begin(epoch),
  /// on_epoch_end(epoch, logs), on_train_end(logs) and, as `batchHooks`
  /// says, on_train_batch_begin(batch) and on_train_batch_end(batch, logs).
  PythonHooks(pybind11::object driver, BatchHooks batchHooks);
  ~PythonHooks() override;

  void onTrainBegin(Logs &logs) override;
  void onTrainEnd(Logs &logs) override;
  void onEpochBegin(int64_t epoch, Logs &logs) override;
  void onEpochEnd(int64_t epoch, Logs &logs) override;
  void onBatchBegin(int64_t batch, Logs &logs) override;
  void onBatchEnd(int64_t batch, Logs &logs) override;

private:
  /// A hook's result: true stops training.
  void stopIf(const pybind11::object &result);

  pybind11::object driver_;
  BatchHooks batchHooks_;
  std::chrono::steady_clock::time_point lastSignalCheck_;
  std::chrono::steady_clock::time_point lastProgress_;
};

} // namespace python
} // namespace kcc

#endif // KCC_PYTHON_PYTHONHOOKS_H
