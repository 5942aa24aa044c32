//===- Prefetcher.cpp - Background workers that read batches ahead --------===//

#include "frontend/training/Prefetcher.h"
#include "runtime/Error.h"

using namespace kcc;

Prefetcher::Prefetcher(const DataSource &source, int64_t first, int64_t count,
                       int workers, int depth)
    : source_(source), first_(first), count_(count),
      depth_(std::max(1, depth)) {
  for (int i = 0; i < workers; ++i)
    workers_.emplace_back([this] { work(); });
}

Prefetcher::~Prefetcher() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  space_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void Prefetcher::work() {
  while (true) {
    int64_t i;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      space_.wait(lock, [&] {
        return stop_ || claimed_ >= count_ || claimed_ < consumed_ + depth_;
      });
      if (stop_ || claimed_ >= count_)
        return;
      i = claimed_++;
    }
    Batch b;
    std::exception_ptr error;
    try {
      b = source_.batch(first_ + i);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (error)
        failed_[i] = error;
      else
        done_[i] = std::move(b);
    }
    ready_.notify_all();
  }
}

Batch Prefetcher::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (consumed_ >= count_)
    throw Error("prefetcher: all " + std::to_string(count_) +
                " batches were taken");
  int64_t i = consumed_;
  if (workers_.empty()) {
    ++consumed_;
    lock.unlock();
    return source_.batch(first_ + i);
  }
  ready_.wait(lock, [&] { return done_.count(i) || failed_.count(i); });
  ++consumed_;
  space_.notify_all();
  if (auto f = failed_.find(i); f != failed_.end())
    std::rethrow_exception(f->second);
  Batch b = std::move(done_[i]);
  done_.erase(i);
  return b;
}
