//===- Interpreter.h - Runs kc functions op by op ---------------*- C++ -*-===//
//
// The interpreter executes a func.func of kc ops one op at a time with the
// kernel library: per op it looks up the kernel, allocates the output from
// the op's result type, runs it, and frees each value after its last use.
// It is the eager baseline for whole training steps (one dispatch and one
// allocation per op, as TF eager and PyTorch) and the numerics oracle for
// the compiler.
//
// Errors (an op or dtype with no kernel, arguments that do not match the
// signature, a kernel failure) throw kcc::Error whose message starts with the
// op's location, e.g. `loc("dense_1"): 'kc.foo' has no kernel`.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_INTERPRETER_INTERPRETER_H
#define KCC_ENGINE_INTERPRETER_INTERPRETER_H

#include "runtime/NDArray.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace mlir {
class Operation;
class Type;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace kcc {

/// What one or more runs dispatched and allocated. Every kc op executed is
/// one dispatch. kc.reshape is zero-copy (the result shares its operand's
/// buffer), so it allocates nothing; cached constants are not counted as
/// allocations either. Arguments are the caller's and never count as live.
struct InterpreterStats {
  int64_t opsDispatched = 0; ///< kernels called (constants included)
  int64_t buffersAllocated = 0;
  int64_t bytesAllocated = 0;
  int64_t peakLiveBytes = 0; ///< largest sum of live intermediate values
};

/// Sees each op's result right after its kernel ran (engine/NumericsCheck
/// checks them for NaN and inf); returning false stops the run there.
using OpObserver =
    std::function<bool(mlir::Operation *op, const NDArray &result)>;

class Interpreter {
public:
  /// Runs `func` on `args` (one per function argument, shapes and dtypes as
  /// in the signature) and returns its results. When the observer stops the
  /// run, the results are empty.
  std::vector<NDArray> run(mlir::func::FuncOp func,
                           const std::vector<NDArray> &args);

  /// Calls `observer` after every op of every run (none: the default).
  void setObserver(OpObserver observer) { observer_ = std::move(observer); }

  const InterpreterStats &stats() const { return stats_; }
  void resetStats() { stats_ = {}; }

  /// Drops the cached constants (see constants_).
  void clearConstantCache() { constants_.clear(); }

private:
  InterpreterStats stats_;
  OpObserver observer_;
  /// kc.constant values converted to NDArrays, keyed by the (uniqued, hence
  /// immortal within its context) ElementsAttr, so repeated runs of a step do
  /// not re-convert weights-sized constants. Cached constants are owned like
  /// parameters: they count as dispatches but not as buffers allocated or
  /// live intermediate bytes. Clear the cache before destroying the context
  /// if this interpreter outlives it.
  std::unordered_map<const void *, NDArray> constants_;
};

/// The NDArray dtype of an MLIR element type; throws kcc::Error for others.
DType dtypeOf(mlir::Type elementType);

} // namespace kcc

#endif // KCC_ENGINE_INTERPRETER_INTERPRETER_H
