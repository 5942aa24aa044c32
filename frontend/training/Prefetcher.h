//===- Prefetcher.h - Workers that read batches ahead -----------*- C++ -*-===//
//
// Keras's data adapter with workers: while the step runs on batch i, worker
// threads read batches i+1 ... i+depth from a DataSource. Batches come out
// in order, each once; a batch that threw rethrows its exception from
// next(). Destroying the Prefetcher stops the workers (batches read ahead
// and not taken are dropped), so an epoch can end early.
//
//   Prefetcher ahead(data, data.numBatches(), /*workers=*/1, /*depth=*/4);
//   for (int64_t i = 0; i < data.numBatches(); ++i)
//     Batch b = ahead.next();
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_PREFETCHER_H
#define KCC_FRONTEND_TRAINING_PREFETCHER_H

#include "frontend/training/DataSource.h"

#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kcc {

class Prefetcher {
public:
  /// Reads batches first .. first+count-1 of `source` with `workers`
  /// threads (0: on the caller's thread in next()), at most `depth` ahead of
  /// the consumer.
  Prefetcher(const DataSource &source, int64_t first, int64_t count,
             int workers = 1, int depth = 4);
  ~Prefetcher();
  Prefetcher(const Prefetcher &) = delete;
  Prefetcher &operator=(const Prefetcher &) = delete;

  /// The next batch, in order; waits for it when it is not read yet.
  Batch next();

private:
  void work();

  const DataSource &source_;
  int64_t first_, count_, depth_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  int64_t claimed_ = 0, consumed_ = 0;
  bool stop_ = false;
  std::map<int64_t, Batch> done_;
  std::map<int64_t, std::exception_ptr> failed_;
  std::vector<std::thread> workers_;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_PREFETCHER_H
