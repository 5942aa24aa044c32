//===- Arrays.cpp - NumPy arrays in and out of kcc ------------------------===//

#include "Arrays.h"

#include "runtime/Error.h"

#include <cstring>

namespace py = pybind11;
using namespace kcc;
using namespace kcc::python;

namespace {

// NumPy 2 moved fields of its dtype struct, which pybind11 2.10 reads
// directly (dtype::itemsize() reads 0): kind, size and byte order are read
// through Python.
char kindOf(const py::dtype &d) {
  return d.attr("kind").cast<std::string>()[0];
}
size_t sizeOf(const py::dtype &d) { return d.attr("itemsize").cast<size_t>(); }

/// kcc's dtype of a NumPy dtype it reads as it is.
std::optional<DType> dtypeOf(const py::dtype &d) {
  char kind = kindOf(d);
  size_t size = sizeOf(d);
  if (kind == 'f' && size == 4)
    return DType::F32;
  if (kind == 'f' && size == 8)
    return DType::F64;
  if (kind == 'i' && size == 4)
    return DType::I32;
  if (kind == 'i' && size == 8)
    return DType::I64;
  if (kind == 'b' && size == 1)
    return DType::I1;
  return std::nullopt;
}

} // namespace

py::array python::borrowable(py::handle object, const std::string &name) {
  py::array array = py::array::ensure(object);
  if (!array)
    throw Error(name + ": expected a NumPy array (or something NumPy reads "
                       "as one)");
  bool contiguous = array.flags() & py::array::c_style;
  if (dtypeOf(array.dtype()) && contiguous && array.dtype().byteorder() != '>')
    return array;
  char kind = array.dtype().kind();
  if (kind == 'f' || kind == 'u' || (kind == 'i' && array.itemsize() < 4))
    return py::array_t < float,
           py::array::c_style | py::array::forcecast > ::ensure(array);
  if (kind == 'i')
    return py::array_t < int64_t,
           py::array::c_style | py::array::forcecast > ::ensure(array);
  throw Error(name + ": arrays of dtype " +
              py::str(array.dtype()).cast<std::string>() +
              " cannot be fed to a model (use numbers or booleans)");
}

NDArray python::borrowNDArray(const py::array &array, const std::string &name) {
  std::optional<DType> dtype = dtypeOf(array.dtype());
  if (!dtype || !(array.flags() & py::array::c_style))
    throw Error(name + ": internal: the array is not borrowable (kind " +
                std::string(1, kindOf(array.dtype())) + ", " +
                std::to_string(sizeOf(array.dtype())) + " bytes, flags " +
                std::to_string(array.flags()) + ")");
  Shape shape(array.shape(), array.shape() + array.ndim());
  return NDArray::borrow(const_cast<void *>(array.data()), shape, *dtype);
}

py::array python::toNumpy(const NDArray &array) {
  py::dtype dtype;
  switch (array.dtype()) {
  case DType::F32:
    dtype = py::dtype::of<float>();
    break;
  case DType::F64:
    dtype = py::dtype::of<double>();
    break;
  case DType::I32:
    dtype = py::dtype::of<int32_t>();
    break;
  case DType::I64:
    dtype = py::dtype::of<int64_t>();
    break;
  case DType::I1:
    dtype = py::dtype::of<bool>();
    break;
  default: {
    NDArray f = array.to(DType::F32);
    return toNumpy(f);
  }
  }
  std::vector<py::ssize_t> shape(array.shape().begin(), array.shape().end());
  // C strides, computed here: see kindOf.
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = dtypeSize(array.dtype());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  py::array out(dtype, shape, strides);
  if (array.bytes())
    std::memcpy(out.mutable_data(), array.rawData(), array.bytes());
  return out;
}
