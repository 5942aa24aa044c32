//===- NumericsCheck.h - Where a NaN or an inf first appears ----*- C++ -*-===//
//
// A step whose loss is NaN says nothing about where the NaN came from. These
// helpers re-run a function (a @train_step on the inputs of the step that
// failed) op by op with the interpreter, check every op's result, and stop
// at the first op that produced a NaN or an infinity: its location is the
// layer that traced it (`kcc train --terminate-on-nan` prints it).
//
//   StepInputs before = captureStepInputs(exe);     // before each step
//   StepResult r = exe.step(x, y);
//   if (!std::isfinite(r.loss))
//     if (auto bad = checkTrainStep(trainStep, before, x, y))
//       llvm::errs() << bad->describe() << "\n";
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_NUMERICSCHECK_H
#define KCC_ENGINE_NUMERICSCHECK_H

#include "engine/Executable.h"
#include "runtime/NDArray.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {

/// NaNs and infinities in an array (none for integer dtypes).
struct NonFiniteCount {
  int64_t nans = 0, infs = 0;
  bool any() const { return nans + infs > 0; }
};
NonFiniteCount countNonFinite(const NDArray &array);

/// The first op of a function, in execution order, whose result holds a NaN
/// or an infinity.
struct NonFiniteOp {
  std::string function; ///< "train_step"
  std::string layer;    ///< the op's location: the layer's name ("dense_1")
  std::string op;       ///< "kc.matmul"
  int64_t opIndex = 0;  ///< ops run before it in the function
  Shape shape;
  NonFiniteCount count;
  /// Non-finite arguments of the run, by name ("dense/kernel") or position.
  std::vector<std::string> nonFiniteArguments;
  /// `layer 'dense_1' (kc.matmul, op 3 of @train_step): 16 NaN, 0 inf in
  /// [32, 128]; non-finite inputs: dense/kernel`.
  std::string describe() const;
};

/// Runs `func` on `args` op by op and returns the first op whose result is
/// not all finite, or std::nullopt. kc.constant ops are not checked (a
/// constant's infinity is deliberate). Throws kcc::Error as
/// Interpreter::run does.
std::optional<NonFiniteOp> findFirstNonFinite(mlir::func::FuncOp func,
                                              const std::vector<NDArray> &args);

/// What a training step starts from: copies of an Executable's weights,
/// optimizer state, step counter and learning rate.
struct StepInputs {
  std::vector<NDArray> params, state;
  int64_t iterations = 0;
  double learningRate = 0;
};
StepInputs captureStepInputs(const Executable &exe);

/// findFirstNonFinite on `trainStep` (a function built by
/// kc-build-train-step, with the layer locations tracing gave it) for the
/// step that started from `before` on the batch (x, y). Throws kcc::Error
/// when `before` does not fit the function's layout.
std::optional<NonFiniteOp> checkTrainStep(mlir::func::FuncOp trainStep,
                                          const StepInputs &before,
                                          const NDArray &x, const NDArray &y);

} // namespace kcc

#endif // KCC_ENGINE_NUMERICSCHECK_H
