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

} // namespace detail
} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_KERNELSUPPORT_H
