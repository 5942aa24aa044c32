//===- PyDataSource.cpp - A keras.utils.PyDataset as a DataSource ---------===//

#include "PyDataSource.h"

#include "Arrays.h"

#include "runtime/Error.h"

namespace py = pybind11;
using namespace kcc;
using namespace kcc::python;

PyDataSource::PyDataSource(py::object reader, py::object onEpochEnd,
                           int64_t numBatches, DataSpec spec, std::string name)
    : reader_(std::move(reader)), onEpochEnd_(std::move(onEpochEnd)),
      numBatches_(numBatches), spec_(std::move(spec)), name_(std::move(name)) {}

PyDataSource::~PyDataSource() {
  py::gil_scoped_acquire gil;
  reader_ = py::object();
  onEpochEnd_ = py::object();
}

namespace {

/// Owned copies of the arrays of `list` (NumPy's buffers are released with
/// the GIL).
std::vector<ExampleArray> copies(const py::handle &list,
                                 const std::vector<ArraySpec> &specs,
                                 const std::string &what) {
  std::vector<ExampleArray> out;
  size_t k = 0;
  for (py::handle item : list) {
    std::string name = what + " '" +
                       (k < specs.size() ? specs[k].name : std::to_string(k)) +
                       "'";
    py::array array = borrowable(item, name);
    NDArray view = borrowNDArray(array, name);
    out.push_back(ExampleArray::fromNDArray(view.to(view.dtype()), name));
    ++k;
  }
  return out;
}

} // namespace

void PyDataSource::setShuffle(bool shuffle, uint64_t seed) {
  shuffle_ = shuffle;
  seed_ = seed;
}

void PyDataSource::onEpochBegin(int64_t epoch) {
  order_ =
      shuffle_ ? epochOrder(numBatches_, seed_, epoch) : std::vector<int64_t>();
}

Batch PyDataSource::batch(int64_t i) const {
  if (i < 0 || i >= numBatches_)
    throw Error(name_ + ": batch " + std::to_string(i) + " out of range (" +
                std::to_string(numBatches_) + " batches)");
  int64_t index = order_.empty() ? i : order_[i];
  Examples e;
  std::string where = name_ + "[" + std::to_string(index) + "]";
  {
    py::gil_scoped_acquire gil;
    py::tuple item = reader_(index);
    e.x = copies(item[0], spec_.inputs, where + ": input");
    e.y = copies(item[1], spec_.targets, where + ": target");
    if (!item[2].is_none()) {
      py::array w = borrowable(item[2], where + ": sample_weight");
      NDArray view = borrowNDArray(w, where + ": sample_weight");
      e.sampleWeight =
          ExampleArray::fromNDArray(view.to(view.dtype()), "sample_weight");
    }
  }
  if (e.size() == 0)
    throw Error(where + ": the batch is empty");
  checkExamples(e, spec_, where, nullptr);
  return dataSourceOf(e, spec_, e.size())->batch(0);
}

void PyDataSource::onEpochEnd() {
  py::gil_scoped_acquire gil;
  if (!onEpochEnd_.is_none())
    onEpochEnd_();
}
