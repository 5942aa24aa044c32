//===- PredictData.h - The arrays kcc predict and evaluate read -*- C++ -*-===//
//
// A model's input from a .npz (x, or the input layer's name) or a .npy
// file, checked against the model before anything runs: a missing array,
// the wrong rank or feature shape, or an empty array is an error naming
// the file, the array and both shapes. Numbers are cast to the input's
// dtype, as Keras does.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_PREDICTDATA_H
#define KCC_TOOLS_KCC_PREDICTDATA_H

#include "frontend/Model.h"
#include "runtime/NDArray.h"

#include <map>
#include <string>
#include <vector>

namespace kcc {
namespace driver {

/// Every array of `path`: a .npz archive, or a .npy file read as "x".
std::map<std::string, NDArray> readDataFile(const std::string &path);

/// One array per input of `model`, by its input layer's name ("x" too for
/// a model of one input), checked against the input's shape and cast to
/// its dtype; all of as many rows. Throws kcc::Error.
std::vector<NDArray> modelInputs(Model &model,
                                 const std::map<std::string, NDArray> &arrays,
                                 const std::string &path);

/// `array` converted to `dtype` (float or integer types).
NDArray castTo(const NDArray &array, DType dtype);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_PREDICTDATA_H
