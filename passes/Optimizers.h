//===- Optimizers.h - Keras optimizers as kc IR -----------------*- C++ -*-===//
//
// Builds the update of one parameter from its gradient and its optimizer
// state ("slots"), with the Keras 3 formulas (keras/src/optimizers/*.py)
// including their order of operations, so kcc's numbers track Keras's. The
// learning rate and the step count are runtime values: step-dependent
// scalars (Adam's bias correction) are computed in the IR once per step.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_OPTIMIZERS_H
#define KCC_PASSES_OPTIMIZERS_H

#include "passes/TrainingConfig.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace kcc {

/// The state one parameter carries, in order ("m", "v" for Adam). State
/// tensors have the parameter's type and start at zero.
llvm::SmallVector<std::string> slotNames(const OptimizerConfig &config);

/// Values shared by every parameter update of one step.
struct StepScalars {
  mlir::Value lr;        ///< rank 0, element type of the params
  mlir::Value adamAlpha; ///< lr * sqrt(1 - b2^t) / (1 - b1^t); Adam only
};

/// Builds the per-step scalars. `iterations` is the rank-0 i64 count of
/// finished steps (t = iterations + 1); `lr` a rank-0 float.
StepScalars buildStepScalars(mlir::OpBuilder &b, mlir::Location loc,
                             const OptimizerConfig &config,
                             mlir::Value iterations, mlir::Value lr,
                             mlir::Type floatType);

/// The new value of `param` and of its slots (in slotNames order).
struct ParamUpdate {
  mlir::Value param;
  llvm::SmallVector<mlir::Value> slots;
};
ParamUpdate buildUpdate(mlir::OpBuilder &b, mlir::Location loc,
                        const OptimizerConfig &config,
                        const StepScalars &scalars, mlir::Value param,
                        mlir::Value grad, mlir::ValueRange slots);

} // namespace kcc

#endif // KCC_PASSES_OPTIMIZERS_H
