//===- Distributed.cpp - Data-parallel training over MPI ------------------===//

#include "frontend/training/Distributed.h"

#include "runtime/Collectives.h"
#include "runtime/Error.h"

#include <algorithm>
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

/// Rows [begin, end) of a batch of `n` rows that rank `rank` of `size`
/// trains on: the first n % size ranks take one row more.
std::pair<int64_t, int64_t> shareOf(int64_t n, int rank, int size) {
  int64_t base = n / size, extra = n % size;
  int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra)};
}

std::string tooSmallBatch(int64_t rows, int size) {
  return "data-parallel training: a batch of " + std::to_string(rows) +
         " example(s) leaves a rank of the " + std::to_string(size) +
         " without any (give a batch of at least " + std::to_string(size) + ")";
}

} // namespace

ShardedDataSource::ShardedDataSource(DataSource &inner, int rank, int size)
    : inner_(inner), rank_(rank), size_(size) {
  for (int64_t n : inner_.batchSizes()) {
    if (n < size_)
      throw Error(tooSmallBatch(n, size_));
    uneven_ |= n % size_ != 0;
  }
}

Batch ShardedDataSource::batch(int64_t i) const {
  Batch global = inner_.batch(i);
  int64_t n = global.size();
  if (n < size_)
    throw Error(tooSmallBatch(n, size_) + " (batch " + std::to_string(i + 1) +
                ")");
  auto [begin, end] = shareOf(n, rank_, size_);
  Batch local;
  local.globalSize = n;
  local.x = rows(global.x, begin, end);
  local.y = rows(global.y, begin, end);
  local.sampleWeight = rows(global.sampleWeight, begin, end);
  for (const NDArray &a : global.inputs)
    local.inputs.push_back(rows(a, begin, end));
  for (const NDArray &a : global.targets)
    local.targets.push_back(rows(a, begin, end));
  if (hasSampleWeights() && !inner_.hasSampleWeights())
    local.sampleWeight = NDArray::fromVector(
        {end - begin}, std::vector<double>(end - begin, 1.0), DType::F32);
  if (local.sampleWeight.defined() && (end - begin) * size_ != n) {
    // The ranks' mean gradients are averaged: a rank with m of the n rows
    // weighs its examples m * size / n, so the average is the mean over
    // the n (a weighted loss divides by the rank's rows, as Keras's
    // sum_over_batch_size does).
    float scale = static_cast<float>(double((end - begin) * size_) / n);
    NDArray w = NDArray::empty(local.sampleWeight.shape(), DType::F32);
    for (int64_t k = 0; k < w.numel(); ++k)
      w.data<float>()[k] = static_cast<float>(local.sampleWeight.at(k)) * scale;
    local.sampleWeight = w;
  }
  return local;
}

int64_t ShardedDataSource::numExamples() const {
  std::vector<int64_t> sizes = batchSizes();
  if (sizes.empty()) {
    int64_t n = inner_.numExamples();
    return n < 0 ? n : n / size_;
  }
  int64_t total = 0;
  for (int64_t n : sizes)
    total += n;
  return total;
}

std::vector<int64_t> ShardedDataSource::batchSizes() const {
  std::vector<int64_t> sizes = inner_.batchSizes();
  for (int64_t &n : sizes) {
    auto [begin, end] = shareOf(n, rank_, size_);
    n = end - begin;
  }
  return sizes;
}
