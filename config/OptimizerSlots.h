//===- OptimizerSlots.h - The optimizer state's layout ----------*- C++ -*-===//
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
// Plain data (no MLIR): the optimizer update (passes/Optimizers.h) and the
// Keras reader and writer (frontend/keras) share it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CONFIG_OPTIMIZERSLOTS_H
#define KCC_CONFIG_OPTIMIZERSLOTS_H

#include "config/TrainingConfig.h"

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

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

} // namespace kcc

#endif // KCC_CONFIG_OPTIMIZERSLOTS_H
