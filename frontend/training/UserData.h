//===- UserData.h - Users' arrays, checked against the step -----*- C++ -*-===//
//
// `kcc train MODEL --data FILE.npz` and `--data DIR`: the examples of a
// NumPy archive (read into memory) or of a folder of .npy files (memory-
// mapped, never read whole), found by Keras's names and checked against
// what the training step takes before anything runs:
//
//   x             the input: "x", or the model's input name (Keras's dict
//                 form: {"input_layer": ...})
//   y             the target: "y", or the name of the model's output layer
//   sample_weight per-example weights [N] (optional)
//
// Every mismatch is a kcc::Error naming the file, the array, what was
// expected and what was found: a missing array (listing those present), a
// wrong rank or example shape, a dtype that cannot be cast, x and y of
// different lengths, a label out of range for a sparse loss. NaN inputs
// are a warning. Dtypes float32/float64/int32/int64/uint8/bool are cast
// to the step's dtype in each batch, as Keras casts NumPy arrays.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_USERDATA_H
#define KCC_FRONTEND_TRAINING_USERDATA_H

#include "passes/TrainingConfig.h"
#include "runtime/NDArray.h"
#include "runtime/data/ExampleArray.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kcc {

class Model;

/// What the step takes: the shape of one example and of one target.
struct DataSpec {
  /// Keras's dict keys for x and y (empty when the model has none).
  std::string inputName, outputName;
  Shape inputRow;
  DType inputType = DType::F32;
  Shape targetRow;
  DType targetType = DType::F32;
  /// Sparse labels: integers in [0, classes).
  bool sparseLabels = false;
  int64_t classes = 0;
};

/// What the step built from `model` and `config` takes (nothing is
/// compiled: data are checked before any step is built). The target is
/// the prediction's shape and dtype, or for a sparse loss its shape less
/// the class axis, of int32 (passes/Losses.h: targetType). Throws
/// kcc::Error naming them when the model has several inputs or outputs:
/// data files feed one of each.
DataSpec dataSpecOf(Model &model, const TrainingConfig &config);

/// The examples of one data file or folder.
struct Examples {
  ExampleArray x, y, sampleWeight;
  int64_t size() const { return x.rows(); }
};

/// Reads `path` (a .npz archive or a folder of .npy files) and checks it
/// against `spec`. Warnings go to `warnings` (null: none).
Examples loadExamples(const std::string &path, const DataSpec &spec,
                      llvm::raw_ostream *warnings);

/// Checks examples from elsewhere (the bundled Fashion-MNIST) against
/// `spec`; `source` names them in errors.
void checkExamples(const Examples &examples, const DataSpec &spec,
                   const std::string &source, llvm::raw_ostream *warnings);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_USERDATA_H
