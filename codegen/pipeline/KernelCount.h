//===- KernelCount.h - Kernels a compiled function launches -----*- C++ -*-===//
//
// Library calls plus top-level generated loop nests: the unit of per-kernel
// cost (a call, a pass over memory, a parallel region). Count a function
// after bufferization and before its linalg ops become loops (the pipeline's
// kc-count-kernels does, and records it on the function).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_PIPELINE_KERNELCOUNT_H
#define KCC_CODEGEN_PIPELINE_KERNELCOUNT_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>

namespace kcc {

struct KernelCount {
  int64_t libraryCalls = 0;
  int64_t loopNests = 0;
  int64_t total() const { return libraryCalls + loopNests; }
};

/// Counts the top-level kernels of a function-like op (func.func before
/// loop lowering, or any op with a region of structured ops).
KernelCount countKernels(mlir::Operation *func);
/// The same for `funcName` of `module` (zero when missing).
KernelCount countKernels(mlir::ModuleOp module, llvm::StringRef funcName);
/// What kc-count-kernels recorded on `func` (kc.library_calls,
/// kc.loop_nests), also after lowering to the LLVM dialect.
std::optional<KernelCount> readKernelCount(mlir::Operation *func);

} // namespace kcc

#endif // KCC_CODEGEN_PIPELINE_KERNELCOUNT_H
