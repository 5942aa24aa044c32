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

void BufferPool::give(std::shared_ptr<void> storage, int64_t bytes,
                      int64_t live) {
  if (storage.use_count() != 1 || pooled_ + bytes + live > limit_)
    return;
  free_[bytes].push_back(std::move(storage));
  pooled_ += bytes;
}

void BufferPool::makeRoom(int64_t bytes, int64_t live) {
  for (auto &[size, buffers] : free_) {
    while (!buffers.empty() && pooled_ + bytes + live > limit_) {
      buffers.pop_back();
      pooled_ -= size;
    }
  }
}

void BufferPool::clear() {
  free_.clear();
  pooled_ = 0;
}
