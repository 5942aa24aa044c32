//===- Arrays.h - NumPy arrays in and out of kcc ----------------*- C++ -*-===//
//
// Arrays cross into kcc without copies when NumPy already holds them as a
// C-contiguous array of a dtype kcc reads (float32/64, int32/64, bool): the
// NDArray borrows the buffer, and the caller keeps the NumPy array alive
// while kcc uses it. Other dtypes and layouts are converted once. Results
// come back as new NumPy arrays.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PYTHON_ARRAYS_H
#define KCC_PYTHON_ARRAYS_H

#include "runtime/NDArray.h"
#include "runtime/data/ExampleArray.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

namespace kcc {
namespace python {

/// A NumPy array kcc can borrow: `array` itself when its dtype and layout
/// allow, else a C-contiguous float32 (floating or unsigned 8-bit) or int64
/// copy. `name` says which argument it was in errors.
pybind11::array borrowable(pybind11::handle array, const std::string &name);

/// A view of `array` (from borrowable(); kept alive by the caller).
NDArray borrowNDArray(const pybind11::array &array, const std::string &name);

/// A copy of `array` as a new NumPy array of the same dtype.
pybind11::array toNumpy(const NDArray &array);

} // namespace python
} // namespace kcc

#endif // KCC_PYTHON_ARRAYS_H
