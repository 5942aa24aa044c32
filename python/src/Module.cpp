//===- Module.cpp - The _kcc extension module -----------------------------===//
//
// The C++ half of the kcc Python package: a Session per Keras model
// (import, weights and optimizer variables in Keras's order, fit, evaluate,
// predict) and kcc.Error, which carries kcc's located messages. Steps run
// with the GIL released; the Python half (kcc/) gives Keras's signatures.
//
//===----------------------------------------------------------------------===//

#include "Arrays.h"
#include "PyDataSource.h"
#include "PythonHooks.h"
#include "Session.h"

#include "runtime/Error.h"

#include <pybind11/stl.h>

namespace py = pybind11;
using namespace kcc;
using namespace kcc::python;

namespace {

/// Borrowed views of `arrays` (each from python::borrowable, held alive in
/// `keep` for as long as the views are used).
std::vector<NDArray> views(const py::object &sequence, const std::string &what,
                           std::vector<py::array> &keep) {
  py::list arrays(sequence);
  std::vector<NDArray> out;
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string name = what + "[" + std::to_string(i) + "]";
    keep.push_back(borrowable(arrays[i], name));
    out.push_back(borrowNDArray(keep.back(), name));
  }
  return out;
}

NDArray optionalView(const py::object &array, const std::string &what,
                     std::vector<py::array> &keep) {
  if (array.is_none())
    return NDArray();
  keep.push_back(borrowable(array, what));
  return borrowNDArray(keep.back(), what);
}

py::list toList(const std::vector<NDArray> &arrays) {
  py::list out;
  for (const NDArray &a : arrays)
    out.append(toNumpy(a));
  return out;
}

py::dict historyToDict(const History &h) {
  py::dict d;
  for (const auto &[key, values] : h.history) {
    py::list l;
    for (const LogValue &v : values)
      l.append(logsToDict({{key, v}})[py::str(key)]);
    d[py::str(key)] = l;
  }
  return d;
}

/// The batches `data` describes (see Session.fit's doc): arrays (borrowed
/// into `keep`), shuffled as `fit` says when given, or a Python reader.
std::unique_ptr<DataSource> sourceOf(Session &s, const py::dict &data,
                                     const std::string &what, int64_t batchSize,
                                     const FitArgs *fit,
                                     std::vector<py::array> &keep) {
  if (data.contains("reader")) {
    auto source = std::make_unique<PyDataSource>(
        data["reader"], data["on_epoch_end"], data["batches"].cast<int64_t>(),
        s.dataSpec(), data["name"].cast<std::string>());
    if (data.contains("on_pass_begin"))
      source->setOnPassBegin(data["on_pass_begin"]);
    // An iterator's batches come in its own order (Keras shuffles only
    // indexed data).
    bool indexed = !data.contains("indexed") || data["indexed"].cast<bool>();
    if (fit)
      source->setShuffle(indexed && fit->shuffle, fit->seed);
    return source;
  }
  Examples e = s.examples(views(py::object(data["x"]), what + " x", keep),
                          views(py::object(data["y"]), what + " y", keep),
                          optionalView(py::object(data["sample_weight"]),
                                       what + " sample_weight", keep),
                          what);
  return s.arraySource(e, batchSize, fit && fit->shuffle, fit ? fit->seed : 0);
}

/// The driver's hooks, or none without a driver.
std::vector<CallbackPtr> hooksOf(const py::object &driver,
                                 BatchHookModes modes) {
  if (driver.is_none())
    return {};
  return {std::make_shared<PythonHooks>(driver, modes)};
}

std::unique_ptr<Session> fromJson(const std::string &text,
                                  const py::object &weights,
                                  const std::string &source,
                                  const std::string &mode, uint64_t seed) {
  auto session = std::make_unique<Session>(
      keras::importModelJson(text, source, seed), mode, source);
  if (!weights.is_none()) {
    std::vector<py::array> keep;
    session->setKerasWeights(views(weights, "weights", keep));
  }
  return session;
}

} // namespace

PYBIND11_MODULE(_kcc, m) {
  m.doc() = "kcc's C++ training step for Keras models (use the kcc package)";
  m.attr("__version__") = KCC_VERSION;
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error &e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

  py::class_<FitArgs>(m, "FitArgs")
      .def(py::init<>())
      .def_readwrite("batch_size", &FitArgs::batchSize)
      .def_readwrite("validation_batch_size", &FitArgs::validationBatchSize)
      .def_readwrite("epochs", &FitArgs::epochs)
      .def_readwrite("initial_epoch", &FitArgs::initialEpoch)
      .def_readwrite("steps_per_epoch", &FitArgs::stepsPerEpoch)
      .def_readwrite("validation_freq", &FitArgs::validationFreq)
      .def_readwrite("validation_epochs", &FitArgs::validationEpochs)
      .def_readwrite("shuffle", &FitArgs::shuffle)
      .def_readwrite("seed", &FitArgs::seed)
      .def_readwrite("class_weight", &FitArgs::classWeight);

  py::class_<Session>(m, "Session")
      .def_static("from_json", &fromJson, py::arg("config"),
                  py::arg("weights") = py::none(), py::arg("source") = "model",
                  py::arg("mode") = "compiled", py::arg("seed") = 0,
                  "A model from Keras's to_json() text with compile_config, "
                  "and its weights in model.weights order.")
      .def("input_names", &Session::inputNames)
      .def("output_names", &Session::outputNames)
      .def("keras_weights", [](Session &s) { return toList(s.kerasWeights()); })
      .def("set_keras_weights",
           [](Session &s, const py::list &weights) {
             std::vector<py::array> keep;
             s.setKerasWeights(views(weights, "weights", keep));
           })
      .def("keras_optimizer_variables",
           [](Session &s) -> py::object {
             std::optional<std::vector<NDArray>> v =
                 s.kerasOptimizerVariables();
             return v ? py::object(toList(*v)) : py::object(py::none());
           })
      .def("set_keras_optimizer_variables",
           [](Session &s, const py::list &variables) {
             std::vector<py::array> keep;
             s.setKerasOptimizerVariables(
                 views(variables, "optimizer variables", keep));
           })
      .def("iterations", &Session::iterations)
      .def_property(
          "learning_rate",
          [](Session &s) { return s.trainer().learningRate(); },
          [](Session &s, double lr) { s.trainer().setLearningRate(lr); })
      .def(
          "fit",
          [](Session &s, const py::dict &train, const py::object &validation,
             const FitArgs &args, const py::object &driver,
             const std::string &batchHooks, const std::string &testHooks) {
            std::vector<py::array> keep;
            std::unique_ptr<DataSource> data =
                sourceOf(s, train, "fit", args.batchSize, &args, keep);
            std::unique_ptr<DataSource> val;
            if (!validation.is_none())
              val = sourceOf(s, validation, "validation_data",
                             args.validationBatchSize ? args.validationBatchSize
                                                      : args.batchSize,
                             nullptr, keep);
            BatchHookModes modes;
            modes.train = batchHooksOf(batchHooks, "fit: batch_hooks");
            modes.test = batchHooksOf(testHooks, "fit: test_hooks");
            std::vector<CallbackPtr> callbacks = hooksOf(driver, modes);
            History h;
            {
              py::gil_scoped_release release;
              h = s.fit(*data, val.get(), args, std::move(callbacks));
              data.reset(); // a PyDataSource takes the GIL to go
              val.reset();
            }
            // With each epoch's wall time (kcc's clock: the hooks'
            // Python included), for benchmarks.
            py::list seconds;
            for (const EpochLogs &e : h.epochs)
              seconds.append(e.seconds);
            return py::make_tuple(historyToDict(h), seconds);
          },
          py::arg("train"), py::arg("validation"), py::arg("args"),
          py::arg("driver"), py::arg("batch_hooks") = "none",
          py::arg("test_hooks") = "none",
          "train and validation: {'x': [...], 'y': [...], 'sample_weight': "
          "array or None} or {'reader': f(i) -> (x, y, sample_weight), "
          "'on_epoch_end': f or None, 'batches': n}. Returns (history, "
          "each epoch's seconds)")
      .def(
          "evaluate",
          [](Session &s, const py::dict &data, int64_t batchSize,
             const py::object &driver, const std::string &batchHooks) {
            std::vector<py::array> keep;
            std::unique_ptr<DataSource> source =
                sourceOf(s, data, "evaluate", batchSize, nullptr, keep);
            BatchHookModes modes;
            modes.test = batchHooksOf(batchHooks, "evaluate: batch_hooks");
            std::vector<CallbackPtr> callbacks = hooksOf(driver, modes);
            Logs logs;
            {
              py::gil_scoped_release release;
              logs = s.evaluate(*source, callbacks);
              source.reset();
              callbacks.clear();
            }
            return logsToDict(logs);
          },
          py::arg("data"), py::arg("batch_size"),
          py::arg("driver") = py::none(), py::arg("batch_hooks") = "none")
      .def(
          "train_on_batch",
          [](Session &s, const py::object &x, const py::object &y,
             const py::object &sampleWeight,
             const std::map<int64_t, double> &classWeight) {
            std::vector<py::array> keep;
            Examples e =
                s.examples(views(x, "x", keep), views(y, "y", keep),
                           optionalView(sampleWeight, "sample_weight", keep),
                           "train_on_batch");
            Logs logs;
            {
              py::gil_scoped_release release;
              logs = s.trainOnBatch(e, classWeight);
            }
            return logsToDict(logs);
          },
          py::arg("x"), py::arg("y"), py::arg("sample_weight"),
          py::arg("class_weight"))
      .def(
          "time_steps",
          [](Session &s, const py::object &x, const py::object &y,
             int64_t steps, int64_t warmup) {
            std::vector<py::array> keep;
            Examples e = s.examples(views(x, "x", keep), views(y, "y", keep),
                                    NDArray(), "bench");
            py::gil_scoped_release release;
            return s.timeSteps(e, steps, warmup);
          },
          py::arg("x"), py::arg("y"), py::arg("steps"), py::arg("warmup"))
      .def("data_spec",
           [](Session &s) {
             DataSpec spec = s.dataSpec();
             auto describe = [](const std::vector<ArraySpec> &specs) {
               py::list out;
               for (const ArraySpec &a : specs)
                 out.append(py::dict(
                     py::arg("name") = a.name, py::arg("row") = a.row,
                     py::arg("dtype") = dtypeName(a.type),
                     py::arg("classes") = a.sparseLabels ? a.classes : 0));
               return out;
             };
             return py::make_tuple(describe(spec.inputs),
                                   describe(spec.targets));
           })
      .def(
          "predict",
          [](Session &s, const py::list &x, int64_t batchSize,
             const py::object &driver, const std::string &batchHooks) {
            std::vector<py::array> keep;
            std::vector<NDArray> inputs = views(x, "x", keep);
            BatchHookModes modes;
            modes.predict = batchHooksOf(batchHooks, "predict: batch_hooks");
            std::vector<CallbackPtr> callbacks = hooksOf(driver, modes);
            std::vector<NDArray> out;
            {
              py::gil_scoped_release release;
              out = s.predict(inputs, batchSize, callbacks);
              callbacks.clear();
            }
            return toList(out);
          },
          py::arg("x"), py::arg("batch_size"), py::arg("driver") = py::none(),
          py::arg("batch_hooks") = "none");
}
