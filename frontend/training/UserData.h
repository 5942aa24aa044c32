//===- UserData.h - Users' arrays, checked against the step -----*- C++ -*-===//
//
// `kcc train MODEL --data FILE.npz` and `--data DIR`: the examples of a
// NumPy archive (read into memory) or of a folder of .npy files (memory-
// mapped, never read whole), found by Keras's names and checked against
// what the training step takes before anything runs:
//
//   x             the input: "x", or the model's input name (Keras's dict
//                 form: {"input_layer": ...}); with several inputs, one
//                 array per input layer name
//   y             the target: "y", or the name of the model's output layer;
//                 with several outputs, one array per output layer name
//   sample_weight per-example weights [N] (optional), applied to every
//                 output as Keras applies a single sample_weight
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

#include "config/TrainingConfig.h"
#include "frontend/training/DataSource.h"
#include "runtime/NDArray.h"
#include "runtime/data/ExampleArray.h"

#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace kcc {

class Model;

/// What the step takes of one input or one output: one example's shape.
struct ArraySpec {
  /// Keras's dict key: the input or output layer's name.
  std::string name;
  Shape row;
  DType type = DType::F32;
  /// A target of a sparse loss: integers in [0, classes).
  bool sparseLabels = false;
  int64_t classes = 0;
  /// A target of ctc: label sequences [N, W], W <= row[0] (the steps),
  /// integers in [0, classes) with 0 the blank; padded with zeros to the
  /// steps when read.
  bool ctcLabels = false;
};

/// What the step takes: one ArraySpec per input and per output, in the
/// model's order.
struct DataSpec {
  std::vector<ArraySpec> inputs, targets;
  bool several() const { return inputs.size() > 1 || targets.size() > 1; }
};

/// What the step built from `model` and `config` takes (nothing is
/// compiled: data are checked before any step is built). A target is its
/// prediction's shape and dtype, or for a sparse loss its shape less the
/// class axis, of int32 (passes/Losses.h: targetType); each output's loss
/// comes from config.outputs when the model has several.
DataSpec dataSpecOf(Model &model, const TrainingConfig &config);

/// The examples of one data file or folder: one array per input and per
/// output (DataSpec's order), and optional per-example weights.
struct Examples {
  std::vector<ExampleArray> x, y;
  ExampleArray sampleWeight;
  int64_t size() const { return x.empty() ? 0 : x[0].rows(); }
  /// Rows [begin, end) of every array.
  Examples slice(int64_t begin, int64_t end) const;
};

/// Reads `path` (a .npz archive or a folder of .npy files) and checks it
/// against `spec`; ctc's label sequences come back padded to the steps.
/// Warnings go to `warnings` (null: none).
Examples loadExamples(const std::string &path, const DataSpec &spec,
                      llvm::raw_ostream *warnings);

/// Checks examples from elsewhere (the bundled Fashion-MNIST) against
/// `spec`; `source` names them in errors.
void checkExamples(const Examples &examples, const DataSpec &spec,
                   const std::string &source, llvm::raw_ostream *warnings);

/// Batches of `examples` for the step `spec` describes: each array cast to
/// its input's or target's dtype, labels stored [N, 1] reshaped to [N].
std::unique_ptr<ArrayDataSource>
dataSourceOf(const Examples &examples, const DataSpec &spec, int64_t batchSize);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_USERDATA_H
