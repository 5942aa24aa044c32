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
// Optimizer state, as @train_step lays it out: for each trainable param in
// order, its slots (slotSpecs order), then the optimizer-wide values
// (globalSlotSpecs, rank 0). Slots and their Keras variable names
// (`<optimizer>/<param path with _>_<slot>`):
//
//   sgd       momentum (only when momentum != 0)
//   adam      momentum, velocity [, velocity_hat with amsgrad]
//   adamw     momentum, velocity [, velocity_hat with amsgrad]
//   rmsprop   velocity [, momentum when momentum > 0]
//             [, average_gradient when centered]
//   adagrad   accumulator (starts at initial_accumulator_value)
//   nadam     momentum, velocity; then one global u_product (starts at 1)
//   adamax    momentum, norm
//   lion      momentum
//
// Keras's `optimizer.variables` are `iteration`, `learning_rate` (absent
// with a schedule), then the slots: interleaved per param as above for every
// optimizer but RMSprop, whose velocities all come before its momentums and
// those before its average gradients (one add_optimizer_variables call
// each), and AMSGrad's velocity_hats, which follow every momentum and
// velocity; Nadam's u_product comes last.
// kerasStateOrder() gives the permutation.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_OPTIMIZERS_H
#define KCC_PASSES_OPTIMIZERS_H

#include "passes/TrainingConfig.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace kcc {

/// One state tensor: its Keras name and the value it starts at.
struct SlotSpec {
  std::string name;
  double init = 0.0;
};

/// The state each trainable parameter carries, in order; these tensors have
/// the parameter's type.
llvm::SmallVector<SlotSpec> slotSpecs(const OptimizerConfig &config);
/// slotSpecs' names.
llvm::SmallVector<std::string> slotNames(const OptimizerConfig &config);
/// Optimizer-wide state, rank 0 in the params' float type, after every
/// parameter's slots (Nadam's u_product).
llvm::SmallVector<SlotSpec> globalSlotSpecs(const OptimizerConfig &config);

/// For each of Keras's optimizer variables after `iteration` and
/// `learning_rate`, in Keras's order, the index of the kcc state tensor
/// holding it, for `numTrainable` trainable params.
std::vector<unsigned> kerasStateOrder(const OptimizerConfig &config,
                                      unsigned numTrainable);

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
