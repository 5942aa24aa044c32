//===- Backend.h - How an Executable runs its functions ---------*- C++ -*-===//
//
// An Executable owns the values bound to its functions (BoundValues) and
// checks what callers hand it; a Backend runs the functions on them, either
// JIT-compiled (CompiledBackend.cpp) or op by op (InterpretedBackend.cpp).
// The two are interchangeable: same bound values, same calling convention,
// same results within float rounding.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_BACKEND_H
#define KCC_ENGINE_BACKEND_H

#include "engine/Executable.h"
#include "passes/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <memory>
#include <optional>
#include <vector>

namespace kcc {

/// The functions of an Executable's module and @train_step's layout.
struct StepFunctions {
  mlir::ModuleOp module;
  mlir::func::FuncOp train, forward;
  std::optional<TrainStepLayout> layout;
};

/// What an Executable binds to @train_step: one set of weights, optimizer
/// state and step counter, updated by every step, and the learning rate.
struct BoundValues {
  std::vector<NDArray> params, state;
  NDArray iterations, lr;
};

/// Metric result `i` of a step into `result`: a scalar (a batch mean) into
/// metrics[i], a rank-1 result (a stateful metric's statistics) into
/// statistics[i] (Executable::step computes its value).
inline void readMetric(const NDArray &value, StepResult &result, unsigned i) {
  if (value.rank() == 0) {
    result.metrics[i] = value.at(0);
    return;
  }
  result.statistics[i] = value.toVector();
}

class Backend {
public:
  virtual ~Backend();

  /// One @train_step on `values` and a checked batch (one array per input
  /// and per target): `values` hold the updated params, state and counter
  /// afterwards; `result` gets the loss and the metrics. `weight` is the
  /// checked %sample_weight of a weighted step, undefined for an unweighted
  /// one.
  virtual void step(BoundValues &values, const std::vector<NDArray> &inputs,
                    const std::vector<NDArray> &targets, const NDArray &weight,
                    StepResult &result) = 0;
  /// One batch of @forward on `args` (params, the inputs, the counter if
  /// any); `outs` (one per result, allocated) receive the predictions.
  virtual void forward(const std::vector<NDArray> &args,
                       std::vector<NDArray> &outs) = 0;
  /// Adds what this backend measured to `stats` (mode and steps are set).
  virtual void addStats(ExecStats &stats, const BoundValues &values) const = 0;
};

/// Compiles @train_step now (through the CompileCache unless
/// `options.useCache` is off) and @forward on its first use.
std::unique_ptr<Backend> createCompiledBackend(const StepFunctions &functions,
                                               const ExecOptions &options);
/// Runs every function op by op on the kernel library.
std::unique_ptr<Backend>
createInterpretedBackend(const StepFunctions &functions);

} // namespace kcc

#endif // KCC_ENGINE_BACKEND_H
