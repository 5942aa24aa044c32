//===- KernelSupport.h - Helpers shared by the kernel files -----*- C++ -*-===//
//
// Internal to runtime/kernels: the error helper, the size below which a loop
// stays on the calling thread, and the task runner built on it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_KERNELSUPPORT_H
#define KCC_RUNTIME_KERNELS_KERNELSUPPORT_H

#include "runtime/kernels/Kernels.h"

#include <cstdint>
#include <string>

namespace kcc {
namespace kernels {
namespace detail {

/// Elements touched below which a kernel stays on the calling thread: forking
/// the OpenMP team costs more than it saves on small tensors.
constexpr int64_t kParallelThreshold = 32768;

/// max(x, acc) as Keras (TF) computes it: a NaN on either side wins, so a
/// running maximum that met a NaN stays NaN. Compares and a select: loops
/// over it still vectorize, with no fast-math assumption.
template <typename T> inline T nanMax(T x, T acc) {
  return x > acc || x != x ? x : acc;
}

[[noreturn]] inline void fail(const char *op, const std::string &what) {
  throw KernelError(std::string(op) + ": " + what);
}

/// Runs task(t) for t in [0, numTasks), in parallel when `work` (elements
/// touched in total) pays for the fork.
template <typename Task>
void runTasks(int64_t numTasks, int64_t work, const Task &task) {
  if (work < kParallelThreshold || numTasks == 1) {
    for (int64_t t = 0; t < numTasks; ++t)
      task(t);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t t = 0; t < numTasks; ++t)
    task(t);
}

/// relu(x) = x < 0 ? 0 : x over `n` elements, which lets NaN through
/// (Keras: relu(NaN) = NaN). oneDNN's relu post-op is a `max(x, 0)`
/// instruction that turns NaN into 0, so the fused epilogues of GEMM and
/// convolution run this over the output (still in cache) instead.
template <typename T> void reluInPlace(T *x, int64_t n) {
  constexpr int64_t kChunk = 1 << 14;
  runTasks((n + kChunk - 1) / kChunk, n, [&](int64_t c) {
    T *__restrict p = x + c * kChunk;
    int64_t len = n - c * kChunk < kChunk ? n - c * kChunk : kChunk;
    for (int64_t i = 0; i < len; ++i)
      p[i] = p[i] < T(0) ? T(0) : p[i];
  });
}

} // namespace detail
} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_KERNELSUPPORT_H
