//===- KernelCounts.h - Static kernel count of a compiled step --*- C++ -*-===//
//
// How many kernels one call of a compiled function launches, counted on the
// kc-linalg-pipeline output (what the CPU pipeline bufferizes and lowers,
// elementwise fusion included): every call to a kcc_rt_* library entry is
// one kernel, every linalg structured op left (generic, fill, copy, ...) is
// one generated loop nest. Calls in the IR are not in loops, so the static
// count is the per-call count.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_EXEC_KERNELCOUNTS_H
#define KCC_RUNTIME_EXEC_KERNELCOUNTS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kcc {

struct KernelCounts {
  int64_t libraryCalls = 0;
  int64_t loopNests = 0;
  /// Sum of the sizes of tensor.empty / bufferization.alloc_tensor results:
  /// an upper bound on the intermediate buffers.
  int64_t intermediateBytes = 0;
};

/// Counts `funcName` of `module` (cloned; the module is not changed).
/// Throws kcc::Error when the linalg pipeline fails.
KernelCounts countKernels(mlir::ModuleOp module, llvm::StringRef funcName,
                          bool fuseElementwise);

} // namespace kcc

#endif // KCC_RUNTIME_EXEC_KERNELCOUNTS_H
