//===- PythonHooks.cpp - the Trainer's callbacks, forwarded to Python -----===//

#include "PythonHooks.h"

#include "Arrays.h"

#include "frontend/training/Trainer.h"
#include "runtime/Error.h"

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

BatchHooks python::batchHooksOf(const std::string &name,
                                const std::string &what) {
  if (name == "every")
    return BatchHooks::Every;
  if (name == "progress")
    return BatchHooks::Progress;
  if (name == "first")
    return BatchHooks::First;
  if (name == "none")
    return BatchHooks::None;
  throw Error(what + " must be none, every, progress or first, got '" + name +
              "'");
}

PythonHooks::PythonHooks(py::object driver, BatchHookModes modes)
    : driver_(std::move(driver)), modes_(modes) {}

PythonHooks::~PythonHooks() {
  // The Trainer drops its callbacks with the GIL released.
  py::gil_scoped_acquire gil;
  driver_ = py::object();
}

void PythonHooks::stopIf(const py::object &result, bool &stop) {
  if (result.cast<bool>())
    stop = true;
}

template <typename Hook>
void PythonHooks::batchEnd(BatchHooks mode, int64_t batch, Hook hook) {
  using namespace std::chrono;
  auto now = steady_clock::now();
  bool forward = mode == BatchHooks::Every ||
                 (mode == BatchHooks::Progress &&
                  (batch == 0 || now - lastProgress_ >= milliseconds(50))) ||
                 (mode == BatchHooks::First && batch == 0);
  if (!forward && now - lastSignalCheck_ < milliseconds(20))
    return;
  lastSignalCheck_ = now;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0)
    throw py::error_already_set();
  if (!forward)
    return;
  lastProgress_ = now;
  hook();
}

// Each hook takes the GIL before it builds a Python object.

void PythonHooks::onTrainBegin(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_train_begin")(), trainer().stopTraining);
}

void PythonHooks::onTrainEnd(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_train_end")(logsToDict(logs)),
         trainer().stopTraining);
}

void PythonHooks::onEpochBegin(int64_t epoch, Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_epoch_begin")(epoch), trainer().stopTraining);
}

void PythonHooks::onEpochEnd(int64_t epoch, Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_epoch_end")(epoch, logsToDict(logs)),
         trainer().stopTraining);
}

void PythonHooks::onBatchBegin(int64_t batch, Logs &logs) {
  if (modes_.train != BatchHooks::Every)
    return;
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_train_batch_begin")(batch), trainer().stopTraining);
}

void PythonHooks::onBatchEnd(int64_t batch, Logs &logs) {
  batchEnd(modes_.train, batch, [&] {
    stopIf(driver_.attr("on_train_batch_end")(batch, logsToDict(logs)),
           trainer().stopTraining);
  });
}

void PythonHooks::onTestBegin(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_test_begin")(), trainer().stopEvaluating);
}

void PythonHooks::onTestEnd(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_test_end")(logsToDict(logs)),
         trainer().stopEvaluating);
}

void PythonHooks::onTestBatchBegin(int64_t batch, Logs &logs) {
  if (modes_.test != BatchHooks::Every)
    return;
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_test_batch_begin")(batch), trainer().stopEvaluating);
}

void PythonHooks::onTestBatchEnd(int64_t batch, Logs &logs) {
  batchEnd(modes_.test, batch, [&] {
    stopIf(driver_.attr("on_test_batch_end")(batch, logsToDict(logs)),
           trainer().stopEvaluating);
  });
}

void PythonHooks::onPredictBegin(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_predict_begin")(), trainer().stopPredicting);
}

void PythonHooks::onPredictEnd(Logs &logs) {
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_predict_end")(), trainer().stopPredicting);
}

void PythonHooks::onPredictBatchBegin(int64_t batch, Logs &logs) {
  if (modes_.predict != BatchHooks::Every)
    return;
  py::gil_scoped_acquire gil;
  stopIf(driver_.attr("on_predict_batch_begin")(batch),
         trainer().stopPredicting);
}

void PythonHooks::onPredictBatchEnd(int64_t batch,
                                    const std::vector<NDArray> &outputs) {
  batchEnd(modes_.predict, batch, [&] {
    py::list arrays;
    for (const NDArray &o : outputs)
      arrays.append(toNumpy(o));
    stopIf(driver_.attr("on_predict_batch_end")(batch, arrays),
           trainer().stopPredicting);
  });
}
