//===- PredictData.cpp - The arrays kcc predict and evaluate read ---------===//

#include "PredictData.h"

#include "runtime/Error.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/Path.h"

using namespace kcc;
using namespace kcc::driver;

std::string driver::numpyShape(const Shape &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

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

NDArray driver::modelInput(Model &model,
                           const std::map<std::string, NDArray> &arrays,
                           const std::string &path) {
  const std::vector<Tensor> &inputs = model.graphInputs();
  if (inputs.size() != 1)
    throw Error("model '" + model.name() + "' has " +
                std::to_string(inputs.size()) +
                " inputs; kcc predict and evaluate run models with one");
  const std::string &inputName = inputs[0].node()->inputName;
  auto it = arrays.find("x");
  std::string name = "x";
  if (it == arrays.end()) {
    it = arrays.find(inputName);
    name = inputName;
  }
  if (it == arrays.end()) {
    std::string present;
    for (const auto &kv : arrays)
      present += (present.empty() ? "" : ", ") + kv.first;
    throw Error(path + ": no array 'x' (or '" + inputName +
                "', the input layer's name); the file has " +
                (present.empty() ? std::string("none") : present));
  }
  const NDArray &x = it->second;
  Shape expected = model.inputShapes()[0];
  Shape features(x.shape().begin() + std::min<size_t>(1, x.shape().size()),
                 x.shape().end());
  if (x.rank() != static_cast<int64_t>(expected.size()) + 1 ||
      features != expected) {
    Shape want{-1};
    want.insert(want.end(), expected.begin(), expected.end());
    std::string wantText = numpyShape(want);
    wantText.replace(1, 2, "N");
    throw Error(path + ": array '" + name + "' has shape " +
                numpyShape(x.shape()) + " but the model's input '" + inputName +
                "' takes " + wantText);
  }
  if (x.shape()[0] == 0)
    throw Error(path + ": array '" + name + "' holds no examples");
  if (x.dtype() == DType::I1)
    throw Error(path + ": array '" + name + "' is bool; the model's input is " +
                dtypeName(inputs[0].dtype()));
  return castTo(x, inputs[0].dtype());
}
