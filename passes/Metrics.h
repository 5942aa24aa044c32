//===- Metrics.h - A stateful Keras metric's statistics as kc IR -*- C++
//-*-===//
//
// Keras's stateful metrics (Precision, AUC, F1Score, MeanIoU, R2Score, ...)
// accumulate variables over an epoch and compute their value from them
// (result()). kcc computes each batch's contribution to those variables as
// kc ops, one rank-1 tensor per metric: kc-build-train-step returns it from
// the step, and evaluate() runs the same IR on predictions (HostMetrics);
// the sums over batches and the formula are metricResult
// (config/MetricConfig.h), on the host.
//
// The statistics, in the prediction's float type (what Keras adds to its
// variables, unweighted as compile()'s metrics are):
//
//   confusion metrics  [tp, fp, tn, fn], each [thresholds, labels] (labels
//                      1 unless AUC's multi_label), Keras's
//                      update_confusion_matrix_variables: pred > threshold,
//                      or its bucketed form for evenly spaced thresholds
//   FBetaScore/F1Score [tp, fp, fn, support], each [classes]
//   the IoU family     the confusion matrix [classes, classes], row = true
//   R2Score            [sum, squared_sum, residual, count], each [columns],
//                      then the number of values
//   RootMeanSquaredError [sum of per-example mean squared errors, examples]
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_METRICS_H
#define KCC_PASSES_METRICS_H

#include "config/MetricConfig.h"

#include "mlir/IR/Builders.h"

#include <string>

namespace kcc {

/// Why `metric` cannot take a prediction of type `pred` (a rank other than
/// 2 where Keras requires it, a class id out of range, ...), or an empty
/// string when it can.
std::string checkMetricShape(const MetricConfig &metric,
                             mlir::RankedTensorType pred);

/// The batch's statistics of stateful `metric` (isStateful) as a rank-1
/// tensor of the prediction's element type. `target` has the form the
/// step's loss takes (targetType): class indices for the sparse loss, else
/// the prediction's type.
mlir::Value buildMetricStatistics(mlir::OpBuilder &b, mlir::Location loc,
                                  const MetricConfig &metric, mlir::Value pred,
                                  mlir::Value target);

} // namespace kcc

#endif // KCC_PASSES_METRICS_H
