//===- PredictData.cpp - The arrays kcc predict and evaluate read ---------===//

#include "PredictData.h"

#include "runtime/Error.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/Path.h"

using namespace kcc;
using namespace kcc::driver;

std::map<std::string, NDArray> driver::readDataFile(const std::string &path) {
  if (llvm::sys::path::extension(path) == ".npy")
    return {{"x", readNpy(path)}};
  return readNpz(path);
}

NDArray driver::castTo(const NDArray &array, DType dtype) {
  if (array.dtype() == dtype)
    return array;
  NDArray out = NDArray::empty(array.shape(), dtype);
  int64_t n = array.numel();
  for (int64_t i = 0; i < n; ++i) {
    double v = array.at(i);
    switch (dtype) {
    case DType::F32:
      out.data<float>()[i] = static_cast<float>(v);
      break;
    case DType::F64:
      out.data<double>()[i] = v;
      break;
    case DType::I32:
      out.data<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case DType::I64:
      out.data<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    default:
      throw Error(std::string("cannot convert an array to ") +
                  dtypeName(dtype));
    }
  }
  return out;
}

namespace {
/// Input `k` of `model` from `arrays`: "x" (a model of one input) or the
/// input layer's name, checked and cast.
NDArray oneInput(Model &model, size_t k,
                 const std::map<std::string, NDArray> &arrays,
                 const std::string &path) {
  const std::vector<Tensor> &inputs = model.graphInputs();
  const std::string &inputName = inputs[k].node()->inputName;
  bool single = inputs.size() == 1;
  auto it = arrays.end();
  std::string name = inputName;
  if (single && arrays.count("x")) {
    it = arrays.find("x");
    name = "x";
  } else {
    it = arrays.find(inputName);
  }
  if (it == arrays.end()) {
    std::string present;
    for (const auto &kv : arrays)
      present += (present.empty() ? "" : ", ") + kv.first;
    throw Error(path + ": no array " +
                (single ? "'x' (or '" + inputName + "', the input layer's name)"
                        : "'" + inputName + "' for the model's input layer '" +
                              inputName + "' (one array per input, by name)") +
                "; the file has " +
                (present.empty() ? std::string("none") : present));
  }
  const NDArray &x = it->second;
  Shape expected = model.inputShapes()[k];
  Shape features(x.shape().begin() + std::min<size_t>(1, x.shape().size()),
                 x.shape().end());
  if (x.rank() != static_cast<int64_t>(expected.size()) + 1 ||
      features != expected) {
    Shape want{-1};
    want.insert(want.end(), expected.begin(), expected.end());
    std::string wantText = shapeToString(want);
    wantText.replace(1, 2, "N");
    throw Error(path + ": array '" + name + "' has shape " +
                shapeToString(x.shape()) + " but the model's input '" +
                inputName + "' takes " + wantText);
  }
  if (x.shape()[0] == 0)
    throw Error(path + ": array '" + name + "' holds no examples");
  if (x.dtype() == DType::I1)
    throw Error(path + ": array '" + name + "' is bool; the model's input is " +
                dtypeName(inputs[k].dtype()));
  return castTo(x, inputs[k].dtype());
}
} // namespace

std::vector<NDArray>
driver::modelInputs(Model &model, const std::map<std::string, NDArray> &arrays,
                    const std::string &path) {
  std::vector<NDArray> out;
  for (size_t k = 0, n = model.graphInputs().size(); k < n; ++k) {
    out.push_back(oneInput(model, k, arrays, path));
    if (out[k].shape()[0] != out[0].shape()[0])
      throw Error(
          path + ": array '" + model.graphInputs()[k].node()->inputName +
          "' has " + std::to_string(out[k].shape()[0]) + " examples but '" +
          model.graphInputs()[0].node()->inputName + "' has " +
          std::to_string(out[0].shape()[0]) + ": every input needs as many");
  }
  return out;
}
