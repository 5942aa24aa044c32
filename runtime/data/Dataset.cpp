//===- Dataset.cpp - Fashion-MNIST loading and batching -------------------===//

#include "runtime/data/Dataset.h"
#include "runtime/Error.h"
#include "runtime/MemoryBudget.h"
#include "runtime/data/IdxReader.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

namespace kcc {

std::string defaultFashionMnistDir() {
  return "/usr/share/datasets/fashion-mnist";
}

namespace {
Dataset loadSplit(const std::string &dir, const std::string &prefix) {
  std::string imagesPath = dir + "/" + prefix + "-images-idx3-ubyte.gz";
  IdxFile images = readIdx(imagesPath);
  IdxFile labels = readIdx(dir + "/" + prefix + "-labels-idx1-ubyte.gz");
  if (images.shape.size() != 3 || labels.shape.size() != 1 ||
      images.shape[0] != labels.shape[0])
    throw Error(dir + "/" + prefix + ": images " + shapeToString(images.shape) +
                " and labels " + shapeToString(labels.shape) + " do not match");
  // Everything downstream divides by the number of examples and the size
  // of one: an empty split is an error here, not a SIGFPE later.
  if (numElements(images.shape) == 0)
    throw Error(imagesPath + ": no examples (images " +
                shapeToString(images.shape) + ")");
  Dataset d;
  int64_t n = images.shape[0];
  requireMemory(
      tensorBytes({n, images.shape[1], images.shape[2], 1}, DType::F32),
      dir + "/" + prefix + ": the images as floats");
  d.x = NDArray::empty({n, images.shape[1], images.shape[2], 1}, DType::F32);
  float *x = d.x.data<float>();
  for (size_t i = 0; i < images.bytes.size(); ++i)
    x[i] = images.bytes[i] / 255.0f;
  d.y = NDArray::empty({n}, DType::I32);
  int32_t *y = d.y.data<int32_t>();
  for (int64_t i = 0; i < n; ++i)
    y[i] = labels.bytes[i];
  return d;
}
} // namespace

FashionMnist loadFashionMnist(const std::string &dir) {
  return {loadSplit(dir, "train"), loadSplit(dir, "t10k")};
}

BatchIterator::BatchIterator(const Dataset &data, int64_t batchSize,
                             bool shuffle, uint64_t seed)
    : data_(data), batchSize_(batchSize), shuffle_(shuffle), seed_(seed),
      order_(data.size()) {
  if (batchSize < 1)
    throw Error("batch size must be positive, got " +
                std::to_string(batchSize));
  if (data.size() < batchSize)
    throw Error("the dataset has " + std::to_string(data.size()) +
                " examples, fewer than one batch of " +
                std::to_string(batchSize));
  startEpoch(0);
}

void BatchIterator::startEpoch(int64_t epoch) {
  std::iota(order_.begin(), order_.end(), 0);
  if (shuffle_) {
    std::mt19937_64 rng(seed_ + static_cast<uint64_t>(epoch));
    std::shuffle(order_.begin(), order_.end(), rng);
  }
}

void BatchIterator::batch(int64_t i, NDArray &x, NDArray &y) const {
  Shape xShape = data_.x.shape();
  xShape[0] = batchSize_;
  if (!x.defined() || x.shape() != xShape)
    x = NDArray::empty(xShape, data_.x.dtype());
  if (!y.defined() || y.dim(0) != batchSize_)
    y = NDArray::empty({batchSize_}, data_.y.dtype());
  size_t rowBytes = data_.x.bytes() / data_.size();
  size_t labelBytes = dtypeSize(data_.y.dtype());
  auto *xs = static_cast<const uint8_t *>(data_.x.rawData());
  auto *ys = static_cast<const uint8_t *>(data_.y.rawData());
  auto *xd = static_cast<uint8_t *>(x.rawData());
  auto *yd = static_cast<uint8_t *>(y.rawData());
  for (int64_t b = 0; b < batchSize_; ++b) {
    int64_t src = order_[i * batchSize_ + b];
    std::memcpy(xd + b * rowBytes, xs + src * rowBytes, rowBytes);
    std::memcpy(yd + b * labelBytes, ys + src * labelBytes, labelBytes);
  }
}

} // namespace kcc
