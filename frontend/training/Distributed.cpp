//===- Distributed.cpp - Data-parallel training over MPI ------------------===//

#include "frontend/training/Distributed.h"

#include "runtime/Collectives.h"
#include "runtime/Error.h"

#include <cstring>
#include <string>

using namespace kcc;

Distributed Distributed::fromEnvironment() {
  Distributed d;
  if (!collectives::launchedByMpi())
    return d;
  collectives::initialize();
  d.rank_ = collectives::rank();
  d.size_ = collectives::size();
  return d;
}

void Distributed::broadcast(std::vector<NDArray> &arrays) const {
  if (size_ == 1)
    return;
  for (NDArray &a : arrays)
    collectives::broadcast(a.data<char>(), a.bytes());
}

std::vector<double> Distributed::mean(std::vector<double> values) const {
  if (size_ == 1)
    return values;
  collectives::allReduceSum(values.data(), values.size());
  for (double &v : values)
    v /= size_;
  return values;
}

void Distributed::finalize() const {
  if (size_ > 1 || collectives::active())
    collectives::finalize();
}

namespace {

/// Rows [begin, end) of `a` (a copy; undefined stays undefined).
NDArray rows(const NDArray &a, int64_t begin, int64_t end) {
  if (!a.defined())
    return a;
  Shape shape = a.shape();
  int64_t rowBytes = shape[0] ? static_cast<int64_t>(a.bytes()) / shape[0] : 0;
  shape[0] = end - begin;
  NDArray out = NDArray::empty(shape, a.dtype());
  std::memcpy(out.data<char>(),
              static_cast<const char *>(a.rawData()) + begin * rowBytes,
              (end - begin) * rowBytes);
  return out;
}

std::string unevenBatch(int64_t rows, int size) {
  return "data-parallel training: a batch of " + std::to_string(rows) +
         " examples does not split evenly over " + std::to_string(size) +
         " ranks (the batch size is the global batch: give a multiple of " +
         std::to_string(size) + ")";
}

} // namespace

ShardedDataSource::ShardedDataSource(DataSource &inner, int rank, int size)
    : inner_(inner), rank_(rank), size_(size) {
  for (int64_t n : inner_.batchSizes())
    if (n % size_ != 0)
      throw Error(unevenBatch(n, size_));
}

Batch ShardedDataSource::batch(int64_t i) const {
  Batch global = inner_.batch(i);
  int64_t n = global.size();
  if (n % size_ != 0)
    throw Error(unevenBatch(n, size_) + " (batch " + std::to_string(i + 1) +
                ")");
  int64_t share = n / size_, begin = rank_ * share, end = begin + share;
  Batch local;
  local.x = rows(global.x, begin, end);
  local.y = rows(global.y, begin, end);
  local.sampleWeight = rows(global.sampleWeight, begin, end);
  for (const NDArray &a : global.inputs)
    local.inputs.push_back(rows(a, begin, end));
  for (const NDArray &a : global.targets)
    local.targets.push_back(rows(a, begin, end));
  return local;
}

int64_t ShardedDataSource::numExamples() const {
  int64_t n = inner_.numExamples();
  return n < 0 ? n : n / size_;
}

std::vector<int64_t> ShardedDataSource::batchSizes() const {
  std::vector<int64_t> sizes = inner_.batchSizes();
  for (int64_t &n : sizes)
    n /= size_;
  return sizes;
}
