//===- DataSource.cpp - Batches for fit(), as keras.utils.Sequence --------===//

#include "frontend/training/DataSource.h"
#include "runtime/Error.h"

#include <algorithm>
#include <numeric>
#include <random>

using namespace kcc;

DataSource::~DataSource() = default;

std::vector<int64_t> kcc::epochOrder(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::seed_seq seq{static_cast<uint32_t>(seed),
                    static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(epoch),
                    static_cast<uint32_t>(static_cast<uint64_t>(epoch) >> 32)};
  std::mt19937_64 rng(seq);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

ArrayDataSource::ArrayDataSource(ExampleArray x, ExampleArray y,
                                 int64_t batchSize, DType xType, DType yType,
                                 ExampleArray sampleWeight)
    : x_(std::move(x)), y_(std::move(y)),
      sampleWeight_(std::move(sampleWeight)), batchSize_(batchSize),
      xType_(xType), yType_(yType) {
  if (batchSize < 1)
    throw Error("batch size must be positive, got " +
                std::to_string(batchSize));
  if (x_.rows() != y_.rows())
    throw Error(x_.name() + " has " + std::to_string(x_.rows()) +
                " examples but " + y_.name() + " has " +
                std::to_string(y_.rows()) + ": x and y must have as many");
  if (x_.rows() == 0)
    throw Error(x_.name() + ": no examples");
  if (sampleWeight_.defined() && sampleWeight_.rows() != x_.rows())
    throw Error(sampleWeight_.name() + " has " +
                std::to_string(sampleWeight_.rows()) + " weights for " +
                std::to_string(x_.rows()) + " examples");
  onEpochBegin(0);
}

void ArrayDataSource::setShuffle(bool shuffle, uint64_t seed) {
  shuffle_ = shuffle;
  seed_ = seed;
  onEpochBegin(0);
}

int64_t ArrayDataSource::numBatches() const {
  return (x_.rows() + batchSize_ - 1) / batchSize_;
}

std::vector<int64_t> ArrayDataSource::batchSizes() const {
  std::vector<int64_t> sizes{std::min(batchSize_, x_.rows())};
  if (int64_t rest = x_.rows() % batchSize_; rest && x_.rows() > batchSize_)
    sizes.push_back(rest);
  return sizes;
}

void ArrayDataSource::onEpochBegin(int64_t epoch) {
  if (shuffle_) {
    order_ = epochOrder(x_.rows(), seed_, epoch);
  } else {
    order_.resize(x_.rows());
    std::iota(order_.begin(), order_.end(), 0);
  }
}

Batch ArrayDataSource::batch(int64_t i) const {
  if (i < 0 || i >= numBatches())
    throw Error("batch " + std::to_string(i) + " out of range (" +
                std::to_string(numBatches()) + " batches)");
  int64_t begin = i * batchSize_;
  int64_t n = std::min(batchSize_, x_.rows() - begin);
  Batch b;
  x_.gather(order_.data() + begin, n, xType_, b.x);
  y_.gather(order_.data() + begin, n, yType_, b.y);
  if (yRow_) {
    Shape shape{n};
    shape.insert(shape.end(), yRow_->begin(), yRow_->end());
    b.y = b.y.reshaped(shape);
  }
  if (sampleWeight_.defined())
    sampleWeight_.gather(order_.data() + begin, n, DType::F32, b.sampleWeight);
  return b;
}
