//===- Losses.h - Keras losses and metrics as kc IR -------------*- C++ -*-===//
//
// Builds a loss or a metric of a prediction against a target as kc ops, with
// Keras 3 semantics (keras.losses.*, reduction "sum_over_batch_size"), so the
// train step reports the numbers a Keras user expects. Used by
// kc-build-train-step; also usable on its own (e.g. an eval step).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_LOSSES_H
#define KCC_PASSES_LOSSES_H

#include "config/TrainingConfig.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LogicalResult.h"

namespace kcc {

/// Keras's clipping epsilon (keras.config.epsilon()).
constexpr double kKerasEpsilon = 1e-7;

/// The target type a loss expects for a prediction of type `pred`: i32 class
/// indices without the class dim for the sparse loss, `pred` otherwise.
/// Fails (null type) on a prediction the loss cannot take.
mlir::RankedTensorType targetType(LossKind kind, mlir::RankedTensorType pred);

/// The mean loss over the batch as a rank-0 tensor of the prediction's
/// element type. `target` must have targetType(kind, pred's type).
///
/// With per-example weights `weight` (a [batch] tensor of the prediction's
/// element type), Keras's weighted "sum_over_batch_size": each element's
/// loss times its example's weight, summed and divided by the number of
/// elements (not by the weights' sum), as reduce_weighted_values does.
mlir::Value buildLoss(mlir::OpBuilder &b, mlir::Location loc, LossKind kind,
                      bool fromLogits, mlir::Value pred, mlir::Value target,
                      mlir::Value weight = {});

/// Keras's reduction of a loss function's values ([batch, ...], or a
/// scalar, which is the loss itself): the weighted sum_over_batch_size,
/// each value times its example's weight `weight` ([batch], optional),
/// summed and divided by the number of values; in `floatType`.
mlir::Value reduceLossValues(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value values, mlir::Value weight,
                             mlir::Type floatType);

/// The metric over the batch as a rank-0 tensor of the prediction's element
/// type (the fraction of correct examples; the mean absolute or squared
/// error of every element for mae and mse). Unweighted even in a weighted
/// step: Keras 3 applies sample weights to `weighted_metrics` only, never to
/// compile()'s `metrics` (CompileMetrics.update_state).
mlir::Value buildMetric(mlir::OpBuilder &b, mlir::Location loc,
                        MetricKind kind, mlir::Value pred, mlir::Value target);

} // namespace kcc

#endif // KCC_PASSES_LOSSES_H
