//===- Optimizers.h - Keras optimizers as kc IR -----------------*- C++ -*-===//
//
// Builds the update of one parameter from its gradient and its optimizer
// state ("slots"), with the Keras 3 formulas (keras/src/optimizers/*.py)
// including their order of operations, so kcc's numbers track Keras's. The
// learning rate and the step count are runtime values: step-dependent
// scalars (Adam's bias correction, a schedule's rate) are computed in the IR
// once per step.
//
// A step does what Keras's BaseOptimizer.apply does, in its order:
//   1. clip the gradients (clipnorm, else global_clipnorm, else clipvalue);
//   2. weight decay: w -= w * weight_decay * lr, on every trainable param;
//   3. the optimizer's update_step on the decayed params.
// `lr` is the step's learning rate: the schedule's value at %iterations, or
// the %lr argument when there is no schedule.
//
// The optimizer state's layout (slots, Keras's order) is config/
// OptimizerSlots.h.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_OPTIMIZERS_H
#define KCC_PASSES_OPTIMIZERS_H

#include "config/OptimizerSlots.h"
#include "config/TrainingConfig.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace kcc {

/// Values shared by every parameter update of one step.
struct StepScalars {
  mlir::Value lr;         ///< rank 0, element type of the params
  mlir::Value adamAlpha;  ///< lr * sqrt(1 - b2^t) / (1 - b1^t); adam(w)
  mlir::Value beta1Power; ///< b1^t; adamax
  mlir::Value beta2Power; ///< b2^t; nadam
  mlir::Value uT, uT1;    ///< nadam: u_t, u_{t+1}
  mlir::Value uProduct;   ///< nadam: u_product after this step's factor
  mlir::Value uProduct1;  ///< nadam: uProduct * u_{t+1}
  /// The new values of the global slots (globalSlotSpecs order).
  llvm::SmallVector<mlir::Value> globalState;
};

/// Builds the per-step scalars. `iterations` is the rank-0 i64 count of
/// finished steps (t = iterations + 1); `lr` the rank-0 float %lr argument,
/// used when the config has no schedule; `globalState` the current global
/// slots.
StepScalars buildStepScalars(mlir::OpBuilder &b, mlir::Location loc,
                             const OptimizerConfig &config,
                             mlir::Value iterations, mlir::Value lr,
                             mlir::Type floatType,
                             mlir::ValueRange globalState = {});

/// Keras's _clip_gradients: the gradients (one per trainable param, in
/// order) after clipnorm, global_clipnorm or clipvalue; unchanged without.
llvm::SmallVector<mlir::Value>
buildClippedGradients(mlir::OpBuilder &b, mlir::Location loc,
                      const OptimizerConfig &config, mlir::ValueRange grads);

/// The new value of `param` and of its slots (in slotSpecs order): weight
/// decay, then the update step, from an already clipped gradient.
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
