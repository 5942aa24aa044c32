//===- LossFunctions.h - Keras's loss functions as kc IR --------*- C++ -*-===//
//
// Private to the losses: each family's builder of a loss function's values,
// Keras's `fn(y_true, y_pred)` before the Loss reduces them (Losses.cpp
// dispatches and reduces). One file per family, as keras/src/losses groups
// them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_LOSSES_LOSSFUNCTIONS_H
#define KCC_PASSES_LOSSES_LOSSFUNCTIONS_H

#include "config/LossConfig.h"
#include "passes/KcEmitter.h"

namespace kcc {
namespace losses {

/// A loss function's values, and Keras's mask of them (0/1 of their shape,
/// set by SparseCategoricalCrossentropy's ignore_class), or null.
struct LossValues {
  mlir::Value values;
  mlir::Value valid;
};

/// `axis` in [0, rank) (negative counts from the end).
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

/// The crossentropies, the focal ones, KLDivergence, Poisson and
/// CategoricalGeneralizedCrossEntropy.
LossValues probabilistic(KcEmitter &e, const LossConfig &loss, mlir::Value pred,
                         mlir::Value target);
/// MSE, MAE, MAPE, MSLE, Huber, LogCosh and CosineSimilarity.
mlir::Value regression(KcEmitter &e, const LossConfig &loss, mlir::Value pred,
                       mlir::Value target);
/// Hinge, SquaredHinge, CategoricalHinge, Dice and Tversky.
mlir::Value marginAndOverlap(KcEmitter &e, const LossConfig &loss,
                             mlir::Value pred, mlir::Value target);

/// Circle: its values (0 where an example has no positive or no negative
/// pair) and Keras's mask of the positive ones. `labels` are int32 [batch].
LossValues circle(KcEmitter &e, const LossConfig &loss, mlir::Value pred,
                  mlir::Value labels);

/// Keras's pearson_correlation and concordance_correlation: a value per
/// example (the last axis reduced) of targets shaped as the prediction.
mlir::Value pearsonCorrelation(KcEmitter &e, mlir::Value pred,
                               mlir::Value target);
mlir::Value concordanceCorrelation(KcEmitter &e, mlir::Value pred,
                                   mlir::Value target);

} // namespace losses
} // namespace kcc

#endif // KCC_PASSES_LOSSES_LOSSFUNCTIONS_H
