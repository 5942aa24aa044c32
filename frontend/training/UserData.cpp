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
#include <functional>
#include <limits>
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

std::string quotedList(const std::vector<std::string> &names) {
  std::string out;
  for (const std::string &n : names)
    out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

/// The keys array `k` of `specs` may be stored under: "x" or "y" (only
/// when there is one), then the layer's name.
std::vector<std::string> keysOf(const std::vector<ArraySpec> &specs, size_t k,
                                const char *plain) {
  std::vector<std::string> keys;
  if (specs.size() == 1)
    keys.push_back(plain);
  if (!specs[k].name.empty() && specs[k].name != plain)
    keys.push_back(specs[k].name);
  return keys;
}

std::string keyList(const std::vector<std::string> &keys) {
  std::string out = "'" + keys[0] + "'";
  for (size_t i = 1; i < keys.size(); ++i)
    out += " (or '" + keys[i] + "')";
  return out;
}

/// "input 'image'" for a model of several, else "input".
std::string roleOf(const char *role, const std::vector<ArraySpec> &specs,
                   size_t k) {
  return specs.size() == 1 ? std::string(role)
                           : std::string(role) + " '" + specs[k].name + "'";
}

/// ctc's labels: [N, W] with W at most the steps, integers in [0, classes).
/// Sequences no alignment fits (L labels and R repeats need L + R steps)
/// are legal, as in Keras, but their loss is about 1e5: a warning says so.
void checkCtcLabels(const ExampleArray &y, const ArraySpec &t,
                    llvm::raw_ostream *warnings) {
  int64_t steps = t.row.empty() ? 0 : t.row[0];
  if (y.rowShape().size() != 1)
    throw Error(y.name() +
                ": ctc takes label sequences of shape [N, max_label_length] "
                "(integers, 0 the blank and the padding), found " +
                shapeToString(y.shape()) + " (" + elementKindName(y.kind()) +
                ")");
  int64_t width = y.rowShape()[0];
  if (width > steps)
    throw Error(y.name() + ": label sequences of " + std::to_string(width) +
                " columns are longer than the " + std::to_string(steps) +
                " time steps of the prediction: ctc aligns at most one label "
                "per step (drop padding columns, or give the model more "
                "steps)");
  for (int64_t r = 0; r < y.rows(); ++r)
    for (int64_t i = 0; i < width; ++i) {
      double label = y.at(r, i);
      if (label >= 0 && label < t.classes &&
          label == static_cast<double>(static_cast<int64_t>(label)))
        continue;
      throw Error(y.name() + ": label " +
                  (label == std::floor(label) && std::fabs(label) < 1e15
                       ? std::to_string(static_cast<int64_t>(label))
                       : pythonFloatRepr(label)) +
                  " of example " + std::to_string(r) + " (position " +
                  std::to_string(i) +
                  ") is not a class: ctc takes integers in [0, " +
                  std::to_string(t.classes) + "), 0 the blank");
    }
  if (!warnings)
    return;
  int64_t infeasible = 0, first = -1, firstNeeds = 0;
  for (int64_t r = 0; r < y.rows(); ++r) {
    int64_t length = 0;
    for (int64_t i = 0; i < width; ++i)
      length += y.at(r, i) != 0;
    int64_t needs = length;
    for (int64_t i = 0; i + 1 < length; ++i)
      needs += y.at(r, i) == y.at(r, i + 1);
    if (needs <= steps)
      continue;
    if (infeasible++ == 0)
      first = r, firstNeeds = needs;
  }
  if (infeasible)
    llvm::WithColor::warning(*warnings, "kcc")
        << y.name() << ": " << infeasible
        << " label sequences cannot align with the " << steps
        << " steps (example " << first << " needs " << firstNeeds
        << "): their ctc loss is about 1e5 each, as in Keras\n";
}

/// `y` [N, W] as int32 [N, steps], zeros after column W (the padding
/// Keras's ctc ignores: only the count of non-zero labels is read).
ExampleArray padCtcLabels(const ExampleArray &y, int64_t steps) {
  int64_t width = y.rowShape()[0];
  if (width == steps)
    return y;
  NDArray padded = NDArray::zeros({y.rows(), steps}, DType::I32);
  int32_t *out = padded.data<int32_t>();
  for (int64_t r = 0; r < y.rows(); ++r)
    for (int64_t i = 0; i < width; ++i)
      out[r * steps + i] = static_cast<int32_t>(y.at(r, i));
  return ExampleArray::fromNDArray(padded, y.name());
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
  DataSpec spec;
  std::vector<std::string> inputNames = model.inputNames();
  std::vector<Shape> inputShapes = model.inputShapes();
  std::vector<DType> inputTypes = model.inputDTypes();
  for (size_t k = 0; k < inputShapes.size(); ++k)
    spec.inputs.push_back({k < inputNames.size() ? inputNames[k] : "",
                           inputShapes[k], inputTypes[k]});
  std::vector<std::string> outputNames = model.outputNames();
  std::vector<Shape> outputShapes = model.outputShapes();
  for (size_t k = 0; k < outputShapes.size(); ++k) {
    ArraySpec t;
    t.name = k < outputNames.size() ? outputNames[k] : "";
    t.row = outputShapes[k];
    const LossConfig &loss =
        k < config.outputs.size() ? config.outputs[k].loss : config.loss;
    t.sparseLabels = lossTakesLabels(loss.kind);
    t.ctcLabels = loss.kind == LossKind::CTC;
    if (t.ctcLabels && t.row.size() != 2)
      throw Error("output " + (t.name.empty() ? "" : "'" + t.name + "' ") +
                  rowDescription(t.row) +
                  " cannot take the ctc loss: it takes logits [N, steps, "
                  "classes]");
    if (t.ctcLabels) {
      // Logits [steps, classes] per example: labels [steps] once padded.
      t.classes = t.row[1];
      t.row.pop_back();
      t.type = DType::I32;
    }
    if (t.sparseLabels) {
      // The prediction has one more axis than the labels: the classes.
      t.classes = t.row.empty() ? 1 : t.row.back();
      // Circle's labels only group examples: any int32 that is no class.
      if (loss.kind == LossKind::Circle)
        t.classes = std::numeric_limits<int32_t>::max();
      if (!t.row.empty())
        t.row.pop_back();
      t.type = DType::I32;
    }
    spec.targets.push_back(std::move(t));
  }
  return spec;
}

Examples Examples::slice(int64_t begin, int64_t end) const {
  Examples e;
  for (const ExampleArray &a : x)
    e.x.push_back(a.slice(begin, end));
  for (const ExampleArray &a : y)
    e.y.push_back(a.slice(begin, end));
  if (sampleWeight.defined())
    e.sampleWeight = sampleWeight.slice(begin, end);
  return e;
}

void kcc::checkExamples(const Examples &e, const DataSpec &spec,
                        const std::string &source,
                        llvm::raw_ostream *warnings) {
  if (e.x.size() != spec.inputs.size() || e.y.size() != spec.targets.size())
    throw Error(source + ": " + std::to_string(e.x.size()) + " inputs and " +
                std::to_string(e.y.size()) + " targets for a model of " +
                std::to_string(spec.inputs.size()) + " and " +
                std::to_string(spec.targets.size()));
  for (size_t k = 0; k < e.x.size(); ++k)
    checkRows(e.x[k], spec.inputs[k].row, "inputs");
  for (size_t k = 0; k < e.y.size(); ++k) {
    const ArraySpec &t = spec.targets[k];
    const ExampleArray &y = e.y[k];
    if (t.ctcLabels) {
      checkCtcLabels(y, t, warnings);
      continue;
    }
    // Keras takes sparse labels as [N] or [N, 1].
    bool labelColumn =
        t.sparseLabels && y.rowShape() == Shape{1} && t.row.empty();
    if (!labelColumn)
      checkRows(y, t.row, t.sparseLabels ? "labels" : "targets",
                t.sparseLabels ? ""
                : y.rowShape().size() + 1 == t.row.size()
                    ? "; integer class labels need "
                      "loss=sparse_categorical_crossentropy"
                    : "");
  }
  const ExampleArray &x = e.x[0];
  if (!spec.several() && x.rows() != e.y[0].rows())
    throw Error(source + ": x has " + std::to_string(x.rows()) + " examples (" +
                x.name() + ") but y has " + std::to_string(e.y[0].rows()) +
                " (" + e.y[0].name() + "): they must have as many");
  for (const std::vector<ExampleArray> *arrays : {&e.x, &e.y})
    for (const ExampleArray &a : *arrays)
      if (a.rows() != x.rows())
        throw Error(source + ": " + x.name() + " has " +
                    std::to_string(x.rows()) + " examples but " + a.name() +
                    " has " + std::to_string(a.rows()) +
                    ": every input and target must have as many");
  if (e.size() == 0)
    throw Error(x.name() + ": no examples");
  for (size_t k = 0; k < e.y.size(); ++k) {
    const ArraySpec &t = spec.targets[k];
    if (!t.sparseLabels)
      continue;
    const ExampleArray &y = e.y[k];
    for (int64_t r = 0; r < y.rows(); ++r) {
      double label = y.at(r, 0);
      if (!(label >= 0 && label < t.classes) ||
          label != static_cast<double>(static_cast<int64_t>(label)))
        throw Error(y.name() + ": label " +
                    (label == std::floor(label) && std::fabs(label) < 1e15
                         ? std::to_string(static_cast<int64_t>(label))
                         : pythonFloatRepr(label)) +
                    " of example " + std::to_string(r) +
                    " is not a class: sparse_categorical_crossentropy "
                    "takes integers in [0, " +
                    std::to_string(t.classes) + ")");
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
  if (warnings)
    for (const ExampleArray &in : e.x)
      if (in.isFloat())
        if (int64_t nans = in.countNaN())
          llvm::WithColor::warning(*warnings, "kcc")
              << in.name() << ": " << nans
              << " NaN values in the inputs; the loss will be NaN\n";
}

Examples kcc::loadExamples(const std::string &path, const DataSpec &spec,
                           llvm::raw_ostream *warnings) {
  Examples e;
  // Finds one array under the first of `keys` present: a .npy file of the
  // folder, or a member of the archive.
  // In errors: "no <role> array 'y'<note>".
  std::function<ExampleArray(const std::vector<std::string> &keys,
                             const std::string &role, const std::string &note,
                             bool required)>
      find;
  std::map<std::string, NDArray> arrays;
  std::string present;
  if (llvm::sys::fs::is_directory(path)) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(path, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".npy")
        present += (present.empty() ? "" : ", ") +
                   llvm::sys::path::filename(it->path()).str();
    find = [&](const std::vector<std::string> &keys, const std::string &role,
               const std::string &note, bool required) -> ExampleArray {
      for (const std::string &name : keys) {
        llvm::SmallString<256> file(path);
        llvm::sys::path::append(file, name + ".npy");
        if (llvm::sys::fs::exists(file))
          return ExampleArray::mapNpy(file.str().str(), file.str().str());
      }
      if (!required)
        return ExampleArray();
      std::string files = "'" + keys[0] + ".npy'";
      for (size_t i = 1; i < keys.size(); ++i)
        files += " (or '" + keys[i] + ".npy')";
      throw Error(path + ": no " + role + (role.empty() ? "" : " ") + "file " +
                  files + note + " in the folder; it holds: " +
                  (present.empty() ? "no .npy files" : present));
    };
  } else {
    if (!llvm::sys::fs::exists(path))
      throw Error(path + ": no such file or directory");
    arrays = readNpz(path);
    for (const auto &[name, a] : arrays)
      present += (present.empty() ? "" : ", ") + name;
    find = [&](const std::vector<std::string> &keys, const std::string &role,
               const std::string &note, bool required) -> ExampleArray {
      for (const std::string &key : keys)
        if (auto it = arrays.find(key); it != arrays.end())
          return ExampleArray::fromNDArray(it->second,
                                           path + ": array '" + key + "'");
      if (!required)
        return ExampleArray();
      throw Error(path + ": no " + role + (role.empty() ? "" : " ") + "array " +
                  keyList(keys) + note + "; the archive holds: " +
                  (present.empty() ? "no arrays" : present));
    };
  }
  auto expected = [](const std::vector<ArraySpec> &specs) {
    std::vector<std::string> names;
    for (const ArraySpec &s : specs)
      names.push_back(s.name);
    return quotedList(names);
  };
  // One of each: "no target array 'y' (or 'dense_2')"; several: "no array
  // 'class' for output 'class' (the model's outputs are 'class', 'value')".
  auto note = [&](const char *role, const std::vector<ArraySpec> &specs,
                  size_t k) {
    return specs.size() == 1
               ? std::string()
               : " for " + roleOf(role, specs, k) + " (the model's " + role +
                     "s are " + expected(specs) + ")";
  };
  bool severalIn = spec.inputs.size() > 1, severalOut = spec.targets.size() > 1;
  for (size_t k = 0; k < spec.inputs.size(); ++k)
    e.x.push_back(find(keysOf(spec.inputs, k, "x"), severalIn ? "" : "input",
                       note("input", spec.inputs, k), true));
  for (size_t k = 0; k < spec.targets.size(); ++k)
    e.y.push_back(find(keysOf(spec.targets, k, "y"), severalOut ? "" : "target",
                       note("output", spec.targets, k), true));
  e.sampleWeight = find({"sample_weight"}, "", "", false);
  // Keras's sample_weight dict (one array per output) needs a step that
  // weighs each output's loss by its own weights, which kcc does not build.
  for (const auto &[name, a] : arrays)
    if (llvm::StringRef(name).starts_with("sample_weight") &&
        name != "sample_weight")
      throw Error(path + ": array '" + name +
                  "': per-output sample weights are not supported yet; give "
                  "one 'sample_weight' array [N], which weighs every "
                  "output's loss as a single Keras sample_weight does");
  checkExamples(e, spec, path, warnings);
  for (size_t k = 0; k < spec.targets.size(); ++k)
    if (spec.targets[k].ctcLabels)
      e.y[k] = padCtcLabels(e.y[k], spec.targets[k].row[0]);
  return e;
}

std::unique_ptr<ArrayDataSource>
kcc::dataSourceOf(const Examples &e, const DataSpec &spec, int64_t batchSize) {
  std::vector<DType> inputTypes, targetTypes;
  for (const ArraySpec &in : spec.inputs)
    inputTypes.push_back(in.type);
  for (const ArraySpec &t : spec.targets)
    targetTypes.push_back(t.type);
  auto source = std::make_unique<ArrayDataSource>(
      e.x, e.y, batchSize, inputTypes, targetTypes, e.sampleWeight);
  for (size_t k = 0; k < e.y.size() && k < spec.targets.size(); ++k)
    if (e.y[k].rowShape() != spec.targets[k].row)
      source->setTargetRowShape(k, spec.targets[k].row);
  return source;
}
