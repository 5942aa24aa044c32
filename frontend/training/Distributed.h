//===- Distributed.h - Data-parallel training over MPI ----------*- C++ -*-===//
//
// Horovod's model: every rank holds the whole model, trains on its own
// contiguous slice of each global batch, and the step averages the
// gradients over the ranks (kc.all_reduce, built in by
// TrainingConfig::dataParallel) before the optimizer, so the weights stay
// identical everywhere. The Trainer does the rest when the config is data
// parallel: it feeds each rank its slice (ShardedDataSource), broadcasts
// rank 0's weights and optimizer state before training, averages the
// losses and metrics it logs, and prints the progress bar on rank 0 only.
//
//   kcc::Distributed dist = kcc::Distributed::fromEnvironment();
//   kcc::TrainingConfig config;
//   config.dataParallel = dist.size() > 1;
//   kcc::Trainer trainer(model, config);
//   trainer.fit(data, fit);              // fit.batchSize is the global batch
//   dist.finalize();
//
// Started without an MPI launcher, the handle is the one-process job.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_DISTRIBUTED_H
#define KCC_FRONTEND_TRAINING_DISTRIBUTED_H

#include "frontend/training/DataSource.h"
#include "runtime/NDArray.h"

#include <vector>

namespace kcc {

/// The MPI job this process is a rank of (or the one-process job).
class Distributed {
public:
  /// Initializes MPI when an MPI launcher started the process (mpirun,
  /// srun: OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the
  /// environment); otherwise the one-process job. Throws kcc::Error when
  /// MPI cannot start.
  static Distributed fromEnvironment();
  /// The one-process job, whatever the environment.
  static Distributed singleProcess() { return Distributed(); }

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Rank 0 prints, logs and saves.
  bool isRoot() const { return rank_ == 0; }

  /// Rank 0's arrays, in place, on every rank (shapes must agree).
  void broadcast(std::vector<NDArray> &arrays) const;
  /// The mean over the ranks of each value.
  std::vector<double> mean(std::vector<double> values) const;
  /// Ends MPI after a successful run. Never call it on an error path: a
  /// rank that exits without it makes the launcher end the whole job, where
  /// MPI_Finalize would wait for ranks blocked in a collective.
  void finalize() const;

private:
  int rank_ = 0, size_ = 1;
};

/// Rank `rank` of `size`'s share of `inner`: a contiguous slice of each of
/// its batches (n rows), as even as it goes (the first n % size ranks take
/// one row more, as Keras trains a partial last batch). When the slices
/// differ, every batch carries sample weights (1, or the data's), scaled
/// on an uneven batch so that the ranks' averaged gradient is the whole
/// batch's mean: the step equals the one-process step. A batch smaller
/// than `size` is a kcc::Error naming the batch and the number of ranks.
class ShardedDataSource : public DataSource {
public:
  ShardedDataSource(DataSource &inner, int rank, int size);

  int64_t numBatches() const override { return inner_.numBatches(); }
  Batch batch(int64_t i) const override;
  void onEpochBegin(int64_t epoch) override { inner_.onEpochBegin(epoch); }
  void onEpochEnd() override { inner_.onEpochEnd(); }
  int64_t numExamples() const override;
  std::vector<int64_t> batchSizes() const override;
  bool hasSampleWeights() const override {
    return inner_.hasSampleWeights() || uneven_;
  }

private:
  DataSource &inner_;
  int rank_, size_;
  /// Some batch (of those announced) does not split evenly.
  bool uneven_ = false;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_DISTRIBUTED_H
