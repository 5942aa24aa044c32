//===- BufferPool.cpp - Freed value buffers kept for the next run ---------===//

#include "engine/interpreter/BufferPool.h"

using namespace kcc;

std::shared_ptr<void> BufferPool::take(int64_t bytes) {
  auto it = free_.find(bytes);
  if (it == free_.end() || it->second.empty())
    return nullptr;
  std::shared_ptr<void> storage = std::move(it->second.back());
  it->second.pop_back();
  pooled_ -= bytes;
  return storage;
}

void BufferPool::give(std::shared_ptr<void> storage, int64_t bytes) {
  if (storage.use_count() != 1 || pooled_ + bytes > limit_)
    return;
  free_[bytes].push_back(std::move(storage));
  pooled_ += bytes;
}

void BufferPool::clear() {
  free_.clear();
  pooled_ = 0;
}
