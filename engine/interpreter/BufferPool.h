//===- BufferPool.h - Freed value buffers kept for the next run -*- C++ -*-===//
//
// An eager step allocates one buffer per op and frees it after its last
// use, and run after run the sizes repeat. The pool keeps the freed buffers
// by byte size and hands each to the next value of that size, so from the
// second run on the interpreter's intermediates cost no malloc, free or
// page fault (together about a third of a small MLP's interpreted step).
// Eager runtimes with caching allocators do the same.
//
// The interpreter sets the limit to the largest set of live intermediates
// its runs reached, and the pool keeps pooled plus live bytes within it:
// the interpreter never holds more than one step needed at its peak. Only
// buffers no array still shares are pooled.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_INTERPRETER_BUFFERPOOL_H
#define KCC_ENGINE_INTERPRETER_BUFFERPOOL_H

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <memory>

namespace kcc {

class BufferPool {
public:
  /// A pooled buffer of exactly `bytes` bytes, or null when there is none.
  std::shared_ptr<void> take(int64_t bytes);

  /// Keeps `storage`, which holds `bytes` bytes, when nothing else shares it
  /// and the limit leaves room beside the `live` bytes in use; otherwise
  /// lets it go.
  void give(std::shared_ptr<void> storage, int64_t bytes, int64_t live);

  /// Frees pooled buffers until `bytes` more beside `live` fit the limit (a
  /// value no pooled buffer fits is about to be allocated).
  void makeRoom(int64_t bytes, int64_t live);

  /// Raises the limit to `bytes` (never lowers it).
  void raiseLimit(int64_t bytes) { limit_ = std::max(limit_, bytes); }

  /// Frees every pooled buffer.
  void clear();

  int64_t pooledBytes() const { return pooled_; }

private:
  llvm::DenseMap<int64_t, llvm::SmallVector<std::shared_ptr<void>, 2>> free_;
  int64_t pooled_ = 0;
  int64_t limit_ = 0;
};

} // namespace kcc

#endif // KCC_ENGINE_INTERPRETER_BUFFERPOOL_H
