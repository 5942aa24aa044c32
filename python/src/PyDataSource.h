//===- PyDataSource.h - A keras.utils.PyDataset as a DataSource -*- C++ -*-===//
//
// Data larger than memory: fit() reads batch i by calling a Python reader
// (the package's wrapper of PyDataset.__getitem__, which resolves dicts by
// input name) under the GIL, from the Trainer's read-ahead workers while
// the step runs. Each batch is copied out of NumPy, checked against the
// step as in-memory arrays are (UserData.h) and cast to the step's dtypes.
// Only the batches in flight are held.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PYTHON_PYDATASOURCE_H
#define KCC_PYTHON_PYDATASOURCE_H

#include "frontend/training/DataSource.h"
#include "frontend/training/UserData.h"

#include <pybind11/pybind11.h>

namespace kcc {
namespace python {

class PyDataSource : public DataSource {
public:
  /// `reader(i)` returns (list of input arrays, list of target arrays,
  /// sample weights or None); `onEpochEnd()` is the dataset's hook.
  /// `numBatches` is len(dataset).
  PyDataSource(pybind11::object reader, pybind11::object onEpochEnd,
               int64_t numBatches, DataSpec spec, std::string name);
  ~PyDataSource() override;

  /// Reads the batches in a new order each epoch, from (seed, epoch), as
  /// Keras's fit(shuffle=True) orders a PyDataset's batches.
  void setShuffle(bool shuffle, uint64_t seed);

  int64_t numBatches() const override { return numBatches_; }
  Batch batch(int64_t i) const override;
  void onEpochBegin(int64_t epoch) override;
  void onEpochEnd() override;

private:
  pybind11::object reader_, onEpochEnd_;
  int64_t numBatches_;
  DataSpec spec_;
  std::string name_;
  bool shuffle_ = false;
  uint64_t seed_ = 0;
  std::vector<int64_t> order_;
};

} // namespace python
} // namespace kcc

#endif // KCC_PYTHON_PYDATASOURCE_H
