//===- Interpreter.h - Runs kc functions op by op ---------------*- C++ -*-===//
//
// The interpreter executes a func.func of kc ops one op at a time with the
// kernel library: per op it calls the op's kernel, which takes a buffer for
// the output from the op's result type, and frees each value after its last
// use. It is the eager baseline for whole training steps (one dispatch and
// one buffer per op, as TF eager and PyTorch) and the numerics oracle for
// the compiler.
//
// What does not change between runs of a function is kept, as an eager
// runtime keeps it: the plan (each op's kernel, and where each value dies),
// checked against the body on every run, and the freed buffers
// (BufferPool.h), which the next run's values of the same size reuse.
//
// Errors (an op or dtype with no kernel, arguments that do not match the
// signature, a kernel failure) throw kcc::Error whose message starts with the
// op's location, e.g. `loc("dense_1"): 'kc.foo' has no kernel`.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_INTERPRETER_INTERPRETER_H
#define KCC_ENGINE_INTERPRETER_INTERPRETER_H

#include "engine/interpreter/BufferPool.h"
#include "runtime/NDArray.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <functional>
#include <memory>
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
  Interpreter();
  ~Interpreter();
  Interpreter(Interpreter &&);
  Interpreter &operator=(Interpreter &&);

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

  /// Bytes of freed buffers held for the next run (BufferPool.h).
  int64_t pooledBytes() const { return pool_.pooledBytes(); }

private:
  struct Plan;
  /// The plan of `func`, made again when its body changed since the last.
  const Plan &planFor(mlir::func::FuncOp func);

  InterpreterStats stats_;
  OpObserver observer_;
  /// kc.constant values converted to NDArrays, keyed by the (uniqued, hence
  /// immortal within its context) ElementsAttr, so repeated runs of a step do
  /// not re-convert weights-sized constants. Cached constants are owned like
  /// parameters: they count as dispatches but not as buffers allocated or
  /// live intermediate bytes. Clear the cache before destroying the context
  /// if this interpreter outlives it.
  std::unordered_map<const void *, NDArray> constants_;
  /// One plan per function run, keyed by its operation.
  llvm::DenseMap<mlir::Operation *, std::unique_ptr<Plan>> plans_;
  BufferPool pool_;
};

/// The NDArray dtype of an MLIR element type; throws kcc::Error for others.
DType dtypeOf(mlir::Type elementType);

} // namespace kcc

#endif // KCC_ENGINE_INTERPRETER_INTERPRETER_H
