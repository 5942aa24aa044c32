//===- UserData.cpp - Users' arrays for fit(), checked against the step ---===//

#include "frontend/training/UserData.h"

#include "frontend/Model.h"
#include "frontend/training/Callbacks.h"
#include "runtime/Error.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <cmath>
#include <map>

using namespace kcc;

namespace {

std::string rowDescription(const Shape &row) {
  Shape s{-1};
  s.insert(s.end(), row.begin(), row.end());
  std::string text = shapeToString(s);
  // "[-1, 28, 28, 1]" -> "[N, 28, 28, 1]"
  return "[N" + text.substr(3);
}

/// The array of `arrays` under `primary` or `alternative`.
const NDArray *findArray(const std::map<std::string, NDArray> &arrays,
                         const std::string &primary,
                         const std::string &alternative) {
  if (auto it = arrays.find(primary); it != arrays.end())
    return &it->second;
  if (!alternative.empty())
    if (auto it = arrays.find(alternative); it != arrays.end())
      return &it->second;
  return nullptr;
}

std::string keyList(const std::string &primary,
                    const std::string &alternative) {
  return "'" + primary + "'" +
         (alternative.empty() ? "" : " (or '" + alternative + "')");
}

void checkRows(const ExampleArray &a, const Shape &expected,
               const std::string &what, const std::string &hint = "") {
  if (a.rowShape() == expected)
    return;
  throw Error(a.name() + ": expected " + what + " of shape " +
              rowDescription(expected) + ", found " + shapeToString(a.shape()) +
              " (" + elementKindName(a.kind()) + ")" + hint);
}

} // namespace

DataSpec kcc::dataSpecOf(Model &model, const TrainingConfig &config) {
  if (model.inputShapes().size() != 1 || model.numOutputs() != 1) {
    auto list = [](const std::vector<std::string> &names) {
      std::string out;
      for (const std::string &n : names)
        out += (out.empty() ? "'" : ", '") + n + "'";
      return out;
    };
    size_t ins = model.inputShapes().size(), outs = model.numOutputs();
    throw Error("the model has " + std::to_string(ins) +
                (ins == 1 ? " input (" : " inputs (") +
                list(model.inputNames()) + ") and " + std::to_string(outs) +
                (outs == 1 ? " output (" : " outputs (") +
                list(model.outputNames()) +
                "); data files feed one input and one output (a model of "
                "several trains from C++: Executable::step and "
                "Trainer::trainOnBatch take one array per input and output)");
  }
  DataSpec spec;
  spec.inputName = model.inputNames()[0];
  spec.outputName = model.outputNames()[0];
  spec.inputRow = model.inputShapes()[0];
  spec.inputType = model.inputDTypes()[0];
  spec.targetRow = model.outputShapes()[0];
  spec.targetType = DType::F32;
  spec.sparseLabels =
      config.loss.kind == LossKind::SparseCategoricalCrossentropy;
  if (spec.sparseLabels) {
    // The prediction has one more axis than the labels: the classes.
    spec.classes = spec.targetRow.empty() ? 1 : spec.targetRow.back();
    if (!spec.targetRow.empty())
      spec.targetRow.pop_back();
    spec.targetType = DType::I32;
  }
  return spec;
}

void kcc::checkExamples(const Examples &e, const DataSpec &spec,
                        const std::string &source,
                        llvm::raw_ostream *warnings) {
  checkRows(e.x, spec.inputRow, "inputs");
  // Keras takes sparse labels as [N] or [N, 1].
  bool labelColumn =
      spec.sparseLabels && e.y.rowShape() == Shape{1} && spec.targetRow.empty();
  if (!labelColumn)
    checkRows(e.y, spec.targetRow, spec.sparseLabels ? "labels" : "targets",
              spec.sparseLabels ? ""
              : e.y.rowShape().size() + 1 == spec.targetRow.size()
                  ? "; integer class labels need "
                    "loss=sparse_categorical_crossentropy"
                  : "");
  if (e.x.rows() != e.y.rows())
    throw Error(source + ": x has " + std::to_string(e.x.rows()) +
                " examples (" + e.x.name() + ") but y has " +
                std::to_string(e.y.rows()) + " (" + e.y.name() +
                "): they must have as many");
  if (e.size() == 0)
    throw Error(e.x.name() + ": no examples");
  if (spec.sparseLabels) {
    for (int64_t r = 0; r < e.y.rows(); ++r) {
      double label = e.y.at(r, 0);
      if (!(label >= 0 && label < spec.classes) ||
          label != static_cast<double>(static_cast<int64_t>(label)))
        throw Error(e.y.name() + ": label " +
                    (label == std::floor(label) && std::fabs(label) < 1e15
                         ? std::to_string(static_cast<int64_t>(label))
                         : pythonFloatRepr(label)) +
                    " of example " + std::to_string(r) +
                    " is not a class: sparse_categorical_crossentropy "
                    "takes integers in [0, " +
                    std::to_string(spec.classes) + ")");
    }
  }
  if (e.sampleWeight.defined()) {
    const ExampleArray &w = e.sampleWeight;
    if (!(w.rowShape().empty() || w.rowShape() == Shape{1}))
      throw Error(w.name() +
                  ": expected one weight per example, of shape "
                  "[N], found " +
                  shapeToString(w.shape()));
    if (w.rows() != e.size())
      throw Error(w.name() + ": " + std::to_string(w.rows()) + " weights for " +
                  std::to_string(e.size()) + " examples");
    for (int64_t r = 0; r < w.rows(); ++r)
      if (double v = w.at(r, 0); !std::isfinite(v))
        throw Error(w.name() + ": the weight of example " + std::to_string(r) +
                    " is " + pythonFloatRepr(v) + ", not a finite number");
  }
  if (warnings && e.x.isFloat())
    if (int64_t nans = e.x.countNaN())
      llvm::WithColor::warning(*warnings, "kcc")
          << e.x.name() << ": " << nans
          << " NaN values in the inputs; the loss will be NaN\n";
}

Examples kcc::loadExamples(const std::string &path, const DataSpec &spec,
                           llvm::raw_ostream *warnings) {
  Examples e;
  if (llvm::sys::fs::is_directory(path)) {
    auto find = [&](const std::string &primary, const std::string &alternative,
                    bool required) -> ExampleArray {
      for (const std::string &name : {primary, alternative}) {
        if (name.empty())
          continue;
        llvm::SmallString<256> file(path);
        llvm::sys::path::append(file, name + ".npy");
        if (llvm::sys::fs::exists(file))
          return ExampleArray::mapNpy(file.str().str(), file.str().str());
      }
      if (required)
        throw Error(
            path + ": no " + primary + ".npy" +
            (alternative.empty() ? "" : " (or " + alternative + ".npy)") +
            " in the folder");
      return ExampleArray();
    };
    e.x = find("x", spec.inputName, true);
    e.y = find("y", spec.outputName, true);
    e.sampleWeight = find("sample_weight", "", false);
  } else {
    if (!llvm::sys::fs::exists(path))
      throw Error(path + ": no such file or directory");
    std::map<std::string, NDArray> arrays = readNpz(path);
    std::string present;
    for (const auto &[name, a] : arrays)
      present += (present.empty() ? "" : ", ") + name;
    auto take = [&](const std::string &primary, const std::string &alternative,
                    const char *what) -> ExampleArray {
      const NDArray *a = findArray(arrays, primary, alternative);
      if (!a) {
        if (!what)
          return ExampleArray();
        throw Error(path + ": no " + what + " array " +
                    keyList(primary, alternative) + "; the archive holds: " +
                    (present.empty() ? "no arrays" : present));
      }
      std::string key = arrays.count(primary) ? primary : alternative;
      return ExampleArray::fromNDArray(*a, path + ": array '" + key + "'");
    };
    e.x = take("x", spec.inputName, "input");
    e.y = take("y", spec.outputName, "target");
    e.sampleWeight = take("sample_weight", "", nullptr);
  }
  checkExamples(e, spec, path, warnings);
  return e;
}
