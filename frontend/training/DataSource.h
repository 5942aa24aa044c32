//===- DataSource.h - Batches for fit(), as a Keras Sequence ----*- C++ -*-===//
//
// fit() reads its examples through a DataSource, Keras's Sequence
// (PyDataset): a number of batches per epoch, batch i as arrays, and hooks
// at the start and the end of each epoch. batch() may be called from
// background workers (the Prefetcher) while the step runs, so it must be
// safe to call concurrently; the epoch hooks run on fit()'s thread while no
// batch is being read.
//
// ArrayDataSource serves in-memory or memory-mapped ExampleArrays (what
// `kcc train --data FILE.npz` and `--data DIR` read) in batches of a fixed
// size, the last one partial as in Keras, shuffled per epoch from
// (seed, epoch) so a resumed run sees the same batches.
//
//   ArrayDataSource data(x, y, /*batchSize=*/32, DType::F32, DType::I32);
//   data.setShuffle(true, /*seed=*/7);
//   trainer.fit(data, fit);
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_DATASOURCE_H
#define KCC_FRONTEND_TRAINING_DATASOURCE_H

#include "runtime/NDArray.h"
#include "runtime/data/ExampleArray.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kcc {

/// One batch: inputs, targets and (optionally) per-example weights. The
/// rows of a batch may be fewer than the others' (the last one). A model of
/// several inputs or outputs gets one array per input and per output in
/// `inputs` and `targets` (model order; x and y are then their first).
struct Batch {
  NDArray x, y, sampleWeight;
  std::vector<NDArray> inputs, targets;
  /// Data-parallel: the examples of the global batch this one is a rank's
  /// slice of (0: not a slice). The epoch's mean loss weighs it by that.
  int64_t globalSize = 0;
  int64_t size() const { return x.defined() ? x.dim(0) : 0; }
  /// `inputs`, or {x} for a batch of one input; the same for the targets.
  std::vector<NDArray> allInputs() const;
  std::vector<NDArray> allTargets() const;
};

class DataSource {
public:
  virtual ~DataSource();
  /// Batches per epoch (Sequence.__len__).
  virtual int64_t numBatches() const = 0;
  /// Batch `i` of the current epoch (Sequence.__getitem__); thread-safe.
  virtual Batch batch(int64_t i) const = 0;
  /// Called when a pass over the data begins, before epoch `epoch` (from 0)
  /// reads any batch: every epoch, unless steps_per_epoch spreads one pass
  /// over several epochs.
  virtual void onEpochBegin(int64_t epoch) {}
  /// Called after the epoch's last batch was read (Sequence.on_epoch_end).
  virtual void onEpochEnd() {}
  /// Examples per epoch, or -1 when unknown.
  virtual int64_t numExamples() const { return -1; }
  /// The batch sizes batch() returns, when known in advance (fit() builds
  /// their steps before training, so no compile lands inside an epoch).
  virtual std::vector<int64_t> batchSizes() const { return {}; }
  /// Whether batches carry per-example weights (fit() then builds the
  /// weighted step before training).
  virtual bool hasSampleWeights() const { return false; }
};

/// Examples in ExampleArrays, batched in order or shuffled per epoch.
class ArrayDataSource : public DataSource {
public:
  /// `x` and `y` must have the same number of rows (checked); batches are
  /// cast to `xType` and `yType`. `sampleWeight`, if defined, is [N].
  ArrayDataSource(ExampleArray x, ExampleArray y, int64_t batchSize,
                  DType xType, DType yType,
                  ExampleArray sampleWeight = ExampleArray());
  /// Several inputs or outputs: one array (and dtype) per input and per
  /// output, all of as many rows; batches fill Batch::inputs/targets.
  ArrayDataSource(std::vector<ExampleArray> inputs,
                  std::vector<ExampleArray> targets, int64_t batchSize,
                  std::vector<DType> inputTypes, std::vector<DType> targetTypes,
                  ExampleArray sampleWeight = ExampleArray());

  /// Shuffle the examples anew each epoch, from (seed, epoch).
  void setShuffle(bool shuffle, uint64_t seed);
  /// Reshapes each target batch to [n, row...] (labels stored [N, 1] for a
  /// step that takes [N]).
  void setTargetRowShape(Shape row) { setTargetRowShape(0, std::move(row)); }
  void setTargetRowShape(size_t output, Shape row);

  int64_t numBatches() const override;
  Batch batch(int64_t i) const override;
  void onEpochBegin(int64_t epoch) override;
  int64_t numExamples() const override { return xs_[0].rows(); }
  std::vector<int64_t> batchSizes() const override;
  bool hasSampleWeights() const override { return sampleWeight_.defined(); }
  int64_t batchSize() const { return batchSize_; }
  /// The example order of the current epoch.
  const std::vector<int64_t> &order() const { return order_; }

private:
  std::vector<ExampleArray> xs_, ys_;
  ExampleArray sampleWeight_;
  int64_t batchSize_;
  std::vector<DType> xTypes_, yTypes_;
  bool shuffle_ = false;
  uint64_t seed_ = 0;
  std::vector<int64_t> order_;
  std::vector<std::optional<Shape>> yRows_;
};

/// The example order of epoch `epoch` over `n` examples: a permutation
/// drawn from (seed, epoch) alone.
std::vector<int64_t> epochOrder(int64_t n, uint64_t seed, int64_t epoch);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_DATASOURCE_H
