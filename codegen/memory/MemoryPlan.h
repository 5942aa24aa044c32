//===- MemoryPlan.h - The arena plan of a compiled function -----*- C++ -*-===//
//
// kc-plan-memory records its plan on the function it planned (discardable
// attributes), so the driver, the JIT and the benchmarks can read it back
// after the pipeline ran: arena bytes against the lower bound (the most
// bytes live at once) and against the sum of all buffers (no sharing).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_MEMORY_MEMORYPLAN_H
#define KCC_CODEGEN_MEMORY_MEMORYPLAN_H

#include "mlir/IR/Operation.h"

#include "llvm/Support/JSON.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kcc {

/// One intermediate buffer: its size, live interval (op positions in the
/// function's block, inclusive) and arena offset.
struct PlannedBuffer {
  int64_t bytes = 0;
  int64_t firstUse = 0, lastUse = 0;
  int64_t offset = 0;
};

struct MemoryPlanReport {
  std::vector<PlannedBuffer> buffers;
  int64_t alignment = 64;
  /// Bytes of the arena (all buffers placed, aligned).
  int64_t arenaBytes = 0;
  /// The most (aligned) bytes live at one position: no plan does better.
  int64_t lowerBoundBytes = 0;
  /// Every buffer on its own (aligned), as an allocation per op would take.
  int64_t sumBytes = 0;
  int64_t numBuffers = 0;

  int64_t savedBytes() const { return sumBytes - arenaBytes; }
  llvm::json::Object toJSON() const;
};

/// Stores the report's totals on `func` (kc.arena_* attributes).
void writeMemoryPlan(mlir::Operation *func, const MemoryPlanReport &report);
/// Reads them back (buffers left empty); std::nullopt when the function was
/// not planned. Works on func.func and, after lowering, on llvm.func.
std::optional<MemoryPlanReport> readMemoryPlan(mlir::Operation *func);

} // namespace kcc

#endif // KCC_CODEGEN_MEMORY_MEMORYPLAN_H
