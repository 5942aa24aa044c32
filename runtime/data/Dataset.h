//===- Dataset.h - In-memory datasets, shuffling and batching ---*- C++ -*-===//

#ifndef KCC_RUNTIME_DATA_DATASET_H
#define KCC_RUNTIME_DATA_DATASET_H

#include "runtime/NDArray.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kcc {

/// Inputs `x` (F32, first dim = examples) and integer labels `y` (I32).
struct Dataset {
  NDArray x;
  NDArray y;
  int64_t size() const { return x.defined() ? x.dim(0) : 0; }
};

/// Fashion-MNIST train and test splits, images scaled to [0, 1] with shape
/// [N, 28, 28, 1] (NHWC), labels I32 in [0, 10).
struct FashionMnist {
  Dataset train;
  Dataset test;
};

/// The folder Debian's dataset-fashion-mnist installs to.
std::string defaultFashionMnistDir();

/// Loads the four IDX files from `dir`; throws kcc::Error naming the first
/// file that is missing or malformed.
FashionMnist
loadFashionMnist(const std::string &dir = defaultFashionMnistDir());

/// Iterates over a dataset in batches of `batchSize`, in an order shuffled by
/// `seed` anew each epoch (no shuffle when `shuffle` is false). The last
/// partial batch is dropped, since a compiled step has a static batch size.
class BatchIterator {
public:
  BatchIterator(const Dataset &data, int64_t batchSize, bool shuffle,
                uint64_t seed);
  int64_t numBatches() const { return data_.size() / batchSize_; }
  /// Starts epoch `epoch` (reshuffles deterministically from seed + epoch).
  void startEpoch(int64_t epoch);
  /// Fills `x` and `y` with batch `i` of the current epoch (allocated on
  /// first use, reused afterwards).
  void batch(int64_t i, NDArray &x, NDArray &y) const;

private:
  const Dataset &data_;
  int64_t batchSize_;
  bool shuffle_;
  uint64_t seed_;
  std::vector<int64_t> order_;
};

} // namespace kcc

#endif // KCC_RUNTIME_DATA_DATASET_H
