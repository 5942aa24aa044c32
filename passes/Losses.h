//===- Losses.h - Keras losses and metrics as kc IR -------------*- C++ -*-===//
//
// Builds a loss or a metric of a prediction against a target as kc ops, with
// Keras 3 semantics (keras.losses.*: each loss function's per-example
// values, then the Loss's reduction of them with the sample weights), so
// the train step reports the numbers a Keras user expects. The one
// definition of every loss: kc-build-train-step builds it into the step,
// and evaluate() runs the same IR on the host (HostMetrics).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_LOSSES_H
#define KCC_PASSES_LOSSES_H

#include "config/TrainingConfig.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LogicalResult.h"

#include <optional>
#include <string>

namespace kcc {

/// Keras's clipping epsilon (keras.config.epsilon()).
constexpr double kKerasEpsilon = 1e-7;

/// The target type a loss expects for a prediction of type `pred`: i32 class
/// indices without the class dim for the sparse loss, i32 label sequences
/// [batch, steps] for ctc (logits [batch, steps, classes]; narrower label
/// arrays are padded with zeros), `pred` otherwise. Fails (null type) on a
/// prediction the loss cannot take.
mlir::RankedTensorType targetType(LossKind kind, mlir::RankedTensorType pred);

/// Why `loss` cannot take a prediction of type `pred` (an axis out of
/// range, a class axis other than the last for the sparse loss, an axis 0
/// that leaves no value per example for `weighted` sample weights), or an
/// empty string when it can.
std::string checkLossShape(const LossConfig &loss, mlir::RankedTensorType pred,
                           bool weighted = false);

/// The loss over the batch as a rank-0 tensor of the prediction's element
/// type: the loss function's values reduced as `loss.reduction` says.
/// `target` must have targetType(loss.kind, pred's type) and the shape must
/// pass checkLossShape.
///
/// With per-example weights `weight` (a [batch] tensor of the prediction's
/// element type), Keras's reduce_weighted_values: each value times its
/// example's weight, then reduced (sum_over_batch_size divides by the number
/// of values, not by the weights' sum).
///
/// With the prediction's Keras mask `mask` (0/1 of the values' shape,
/// pred's shape without its last axis), Keras's apply_mask: masked values
/// count for nothing and the means are over the real ones.
mlir::Value buildLoss(mlir::OpBuilder &b, mlir::Location loc,
                      const LossConfig &loss, mlir::Value pred,
                      mlir::Value target, mlir::Value weight = {},
                      mlir::Value mask = {});

/// Keras's reduction of a loss function's values ([batch, ...], or a
/// scalar, which is the loss itself): each value times its example's weight
/// `weight` ([batch], optional), then reduced by `reduction`; in
/// `floatType`. `valid` (0/1 of the values' shape, optional) is Keras's
/// mask: masked values count for nothing, and the means are over the valid
/// ones.
mlir::Value
reduceLossValues(mlir::OpBuilder &b, mlir::Location loc, mlir::Value values,
                 mlir::Value weight, mlir::Type floatType,
                 LossReduction reduction = LossReduction::SumOverBatchSize,
                 mlir::Value valid = {});

/// A metric that averages a loss function (Keras's MeanMetricWrapper: mae,
/// mse, mape, hinge, the crossentropies, ...): that loss, unweighted, times
/// `scale` (-1 for cosine_similarity, the loss's negative).
struct MetricLoss {
  LossConfig loss;
  double scale = 1.0;
};
/// The loss a metric averages; none for the accuracies.
std::optional<MetricLoss> metricAsLoss(MetricKind kind);

/// The metric over the batch as a rank-0 tensor of the prediction's element
/// type (the fraction of correct examples; the mean absolute or squared
/// error of every element for mae and mse). Unweighted even in a weighted
/// step: Keras 3 applies sample weights to `weighted_metrics` only, never to
/// compile()'s `metrics` (CompileMetrics.update_state).
mlir::Value buildMetric(mlir::OpBuilder &b, mlir::Location loc, MetricKind kind,
                        mlir::Value pred, mlir::Value target);
/// The same with the metric's arguments (the top-k accuracies' k). A
/// stateful metric is built by buildMetricStatistics (Metrics.h) instead.
/// With `mask` (as buildLoss's), the mean over the real steps (Keras's
/// MeanMetricWrapper weighs the values by the mask).
mlir::Value buildMetric(mlir::OpBuilder &b, mlir::Location loc,
                        const MetricConfig &metric, mlir::Value pred,
                        mlir::Value target, mlir::Value mask = {});

} // namespace kcc

#endif // KCC_PASSES_LOSSES_H
