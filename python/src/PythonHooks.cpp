//===- PythonHooks.cpp - fit()'s callbacks, forwarded to Python -----------===//

#include "PythonHooks.h"

#include "frontend/training/Trainer.h"

namespace py = pybind11;
using namespace kcc;
using namespace kcc::python;

py::dict python::logsToDict(const Logs &logs) {
  py::dict d;
  for (const auto &[key, value] : logs) {
    if (value.isList()) {
      py::list l;
      for (double v : value.values())
        l.append(v);
      d[py::str(key)] = l;
    } else {
      d[py::str(key)] = value.number();
    }
  }
  return d;
}

PythonHooks::PythonHooks(py::object driver, BatchHooks batchHooks)
    : driver_(std::move(driver)), batchHooks_(batchHooks) {}

PythonHooks::~PythonHooks() {
  // fit() drops its callbacks with the GIL released.
  py::gil_scoped_acquire gil;
  driver_ = py::object();
}

void PythonHooks::stopIf(const py::object &result) {
  if (result.cast<bool>())
    trainer().stopTraining = true;
}

// Each hook takes the GIL before it builds a Python object.

void PythonHooks::onTrainBegin(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_train_begin")());
}

void PythonHooks::onTrainEnd(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_train_end")(logsToDict(logs)));
}

void PythonHooks::onEpochBegin(int64_t epoch, Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_epoch_begin")(epoch));
}

void PythonHooks::onEpochEnd(int64_t epoch, Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_epoch_end")(epoch, logsToDict(logs)));
}

void PythonHooks::onBatchBegin(int64_t batch, Logs &logs) {
  if (batchHooks_ != BatchHooks::Every)
    return;
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_train_batch_begin")(batch));
}

void PythonHooks::onBatchEnd(int64_t batch, Logs &logs) {
  using namespace std::chrono;
  auto now = steady_clock::now();
  bool forward = batchHooks_ == BatchHooks::Every ||
                 (batchHooks_ == BatchHooks::Progress &&
                  (batch == 0 || now - lastProgress_ >= milliseconds(50)));
  if (!forward && now - lastSignalCheck_ < milliseconds(20))
    return;
  lastSignalCheck_ = now;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  if (!forward)
    return;
  lastProgress_ = now;
  stopIf(driver_.attr("on_train_batch_end")(batch, logsToDict(logs)));
}
