//===- PythonHooks.h - fit()'s callbacks, forwarded to Python ---*- C++ -*-===//
//
// The one C++ callback kcc.fit passes to Trainer::fit. It forwards the
// train and epoch hooks to a Python driver object (which runs Keras's
// CallbackList and moves the weights into the Keras model), and the batch
// hooks only when a Python callback overrides them, so a step costs no
// Python beyond what the user asked for. Each hook takes the GIL for its
// call; the driver's hooks return True to stop training (Keras's
// model.stop_training). At every step boundary a pending Ctrl-C becomes a
// KeyboardInterrupt raised out of fit().
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PYTHON_PYTHONHOOKS_H
#define KCC_PYTHON_PYTHONHOOKS_H

#include "frontend/training/Callbacks.h"

#include <pybind11/pybind11.h>

namespace kcc {
namespace python {

/// Keras's logs dict: floats, a list for a metric that logs several.
pybind11::dict logsToDict(const Logs &logs);

class PythonHooks : public Callback {
public:
  /// `driver` has on_train_begin(), on_epoch_begin(epoch),
  /// on_epoch_end(epoch, logs), on_train_end(logs) and, when `batchHooks`,
  /// on_train_batch_begin(batch) and on_train_batch_end(batch, logs).
  PythonHooks(pybind11::object driver, bool batchHooks);
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
  bool batchHooks_;
};

} // namespace python
} // namespace kcc

#endif // KCC_PYTHON_PYTHONHOOKS_H
