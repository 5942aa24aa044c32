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

std::vector<NDArray> Batch::allInputs() const {
  return inputs.empty() ? std::vector<NDArray>{x} : inputs;
}

std::vector<NDArray> Batch::allTargets() const {
  return targets.empty() ? std::vector<NDArray>{y} : targets;
}

ArrayDataSource::ArrayDataSource(ExampleArray x, ExampleArray y,
                                 int64_t batchSize, DType xType, DType yType,
                                 ExampleArray sampleWeight)
    : ArrayDataSource(std::vector<ExampleArray>{std::move(x)},
                      std::vector<ExampleArray>{std::move(y)}, batchSize,
                      std::vector<DType>{xType}, std::vector<DType>{yType},
                      std::move(sampleWeight)) {}

ArrayDataSource::ArrayDataSource(std::vector<ExampleArray> inputs,
                                 std::vector<ExampleArray> targets,
                                 int64_t batchSize,
                                 std::vector<DType> inputTypes,
                                 std::vector<DType> targetTypes,
                                 ExampleArray sampleWeight)
    : xs_(std::move(inputs)), ys_(std::move(targets)),
      sampleWeight_(std::move(sampleWeight)), batchSize_(batchSize),
      xTypes_(std::move(inputTypes)), yTypes_(std::move(targetTypes)) {
  if (batchSize < 1)
    throw Error("batch size must be positive, got " +
                std::to_string(batchSize));
  if (xs_.empty() || ys_.empty() || xs_.size() != xTypes_.size() ||
      ys_.size() != yTypes_.size())
    throw Error("ArrayDataSource: one array and one dtype per input and per "
                "output");
  const ExampleArray &x = xs_[0];
  for (const std::vector<ExampleArray> *arrays : {&xs_, &ys_})
    for (const ExampleArray &a : *arrays)
      if (a.rows() != x.rows())
        throw Error(x.name() + " has " + std::to_string(x.rows()) +
                    " examples but " + a.name() + " has " +
                    std::to_string(a.rows()) +
                    ": every input and target must have as many");
  if (x.rows() == 0)
    throw Error(x.name() + ": no examples");
  if (sampleWeight_.defined() && sampleWeight_.rows() != x.rows())
    throw Error(sampleWeight_.name() + " has " +
                std::to_string(sampleWeight_.rows()) + " weights for " +
                std::to_string(x.rows()) + " examples");
  yRows_.resize(ys_.size());
  onEpochBegin(0);
}

void ArrayDataSource::setTargetRowShape(size_t output, Shape row) {
  yRows_.at(output) = std::move(row);
}

void ArrayDataSource::setShuffle(bool shuffle, uint64_t seed) {
  shuffle_ = shuffle;
  seed_ = seed;
  onEpochBegin(0);
}

int64_t ArrayDataSource::numBatches() const {
  return (numExamples() + batchSize_ - 1) / batchSize_;
}

std::vector<int64_t> ArrayDataSource::batchSizes() const {
  int64_t rows = numExamples();
  std::vector<int64_t> sizes{std::min(batchSize_, rows)};
  if (int64_t rest = rows % batchSize_; rest && rows > batchSize_)
    sizes.push_back(rest);
  return sizes;
}

void ArrayDataSource::onEpochBegin(int64_t epoch) {
  if (shuffle_) {
    order_ = epochOrder(numExamples(), seed_, epoch);
  } else {
    order_.resize(numExamples());
    std::iota(order_.begin(), order_.end(), 0);
  }
}

Batch ArrayDataSource::batch(int64_t i) const {
  if (i < 0 || i >= numBatches())
    throw Error("batch " + std::to_string(i) + " out of range (" +
                std::to_string(numBatches()) + " batches)");
  int64_t begin = i * batchSize_;
  int64_t n = std::min(batchSize_, numExamples() - begin);
  const int64_t *rows = order_.data() + begin;
  Batch b;
  std::vector<NDArray> inputs(xs_.size()), targets(ys_.size());
  for (size_t k = 0; k < xs_.size(); ++k)
    xs_[k].gather(rows, n, xTypes_[k], inputs[k]);
  for (size_t k = 0; k < ys_.size(); ++k) {
    ys_[k].gather(rows, n, yTypes_[k], targets[k]);
    if (const std::optional<Shape> &row = yRows_[k]) {
      Shape shape{n};
      shape.insert(shape.end(), row->begin(), row->end());
      targets[k] = targets[k].reshaped(shape);
    }
  }
  b.x = inputs[0];
  b.y = targets[0];
  if (xs_.size() > 1 || ys_.size() > 1) {
    b.inputs = std::move(inputs);
    b.targets = std::move(targets);
  }
  if (sampleWeight_.defined())
    sampleWeight_.gather(order_.data() + begin, n, DType::F32, b.sampleWeight);
  return b;
}
