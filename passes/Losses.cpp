//===- Losses.cpp - Keras losses and metrics as kc IR ---------------------===//
//
// A loss is its function's values (the family files under losses/), then
// Keras's reduce_weighted_values: times the sample weights, reduced as the
// Loss's `reduction` says. The metrics of compile() follow.
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/KcEmitter.h"
#include "passes/losses/LossFunctions.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kcc {

RankedTensorType targetType(LossKind kind, RankedTensorType pred) {
  if (!pred || !isa<FloatType>(pred.getElementType()) || pred.getRank() < 1)
    return {};
  auto i32 = IntegerType::get(pred.getContext(), 32);
  // CTC's label sequences are padded to the number of steps: a sequence
  // longer than that has no alignment, and trailing zeros (padding) leave
  // Keras's loss unchanged, so any narrower label array fits.
  if (kind == LossKind::CTC)
    return pred.getRank() == 3
               ? RankedTensorType::get(pred.getShape().take_front(2), i32)
               : RankedTensorType();
  if (!lossTakesLabels(kind))
    return pred;
  return RankedTensorType::get(pred.getShape().drop_back(), i32);
}

std::string checkLossShape(const LossConfig &loss, RankedTensorType pred,
                           bool weighted) {
  int64_t rank = pred.getRank();
  if (loss.kind == LossKind::CTC)
    return rank == 3 ? ""
                     : "ctc takes logits [batch, steps, classes], a "
                       "prediction of rank 3 (got rank " +
                           std::to_string(rank) + ")";
  std::optional<int64_t> axis = loss.resolvedAxis();
  if (!axis)
    return "";
  if (*axis < -rank || *axis >= rank)
    return "axis " + std::to_string(*axis) +
           " is out of range for a "
           "prediction of rank " +
           std::to_string(rank);
  if (loss.kind == LossKind::SparseCategoricalCrossentropy &&
      losses::normalizeAxis(*axis, rank) != rank - 1)
    return "the class axis of sparse_categorical_crossentropy must be the "
           "last (got axis " +
           std::to_string(*axis) + ")";
  if (loss.kind == LossKind::Circle &&
      (rank != 2 || ShapedType::isDynamic(pred.getDimSize(0))))
    return "circle needs embeddings [batch, dim] of a static batch size, got "
           "a prediction of rank " +
           std::to_string(rank);
  if (weighted && rank > 1 && losses::normalizeAxis(*axis, rank) == 0)
    return "axis 0 reduces over the batch, which leaves no value per "
           "example for the sample weights to weigh";
  return "";
}

namespace {

/// The per-example weights `w` ([batch]) broadcast to `like` ([batch, ...]).
Value weightLike(KcEmitter &e, Value w, Value like) {
  RankedTensorType t = KcEmitter::typeOf(like);
  llvm::SmallVector<int64_t> shape(t.getRank(), 1);
  shape[0] = t.getDimSize(0);
  auto column = RankedTensorType::get(shape, t.getElementType());
  if (KcEmitter::typeOf(w) != column)
    w = e.builder().create<kc::ReshapeOp>(e.location(), column, w);
  return e.broadcastLike(w, like);
}

/// `num / den`, or 0 where `den` is 0 (ops.divide_no_nan), for rank-0
/// tensors.
Value divideNoNan(KcEmitter &e, Value num, Value den) {
  Value zero = e.splatLike(den, 0.0);
  Value isZero = e.compare(kc::CompareDirection::EQ, den, zero);
  Value safe = e.select(isZero, e.splatLike(den, 1.0), den);
  return e.select(isZero, zero, e.div(num, safe));
}

/// Fraction of equal elements of two float tensors of one type; with
/// `mask` (0/1 of their shape), of the real ones.
Value meanEqual(KcEmitter &e, Value a, Value b, Value mask = {}) {
  RankedTensorType t = KcEmitter::typeOf(a);
  auto maskType = t.clone(e.builder().getI1Type());
  Value eq = e.builder().create<kc::CompareOp>(e.location(), maskType,
                                               kc::CompareDirection::EQ, a, b);
  Value hits = e.cast(eq, t.getElementType());
  if (!mask)
    return e.meanAll(hits);
  if (getElementTypeOrSelf(mask.getType()) != t.getElementType())
    mask = e.cast(mask, t.getElementType());
  return divideNoNan(e, e.sumAll(e.mul(hits, mask)), e.sumAll(mask));
}

Value argmaxAsFloat(KcEmitter &e, Value x, Type floatType) {
  RankedTensorType t = KcEmitter::typeOf(x);
  auto idxType =
      RankedTensorType::get(t.getShape().drop_back(), e.builder().getI64Type());
  Value idx = e.builder().create<kc::ArgmaxOp>(
      e.location(), idxType, x, e.builder().getI64IntegerAttr(t.getRank() - 1));
  return e.cast(idx, floatType);
}

/// Keras's in_top_k: the fraction of rows whose target class scores at
/// least the k-th highest prediction, i.e. fewer than k classes score
/// strictly more (ties count as hits). `oneHot` marks the target class.
Value meanInTopK(KcEmitter &e, Value pred, Value oneHot, int64_t k) {
  RankedTensorType t = KcEmitter::typeOf(pred);
  Type ft = t.getElementType();
  Value targetScore =
      e.broadcastLike(e.sumLastAxis(e.mul(oneHot, pred), true), pred);
  Value above = e.builder().create<kc::CompareOp>(
      e.location(), t.clone(e.builder().getI1Type()), kc::CompareDirection::GT,
      pred, targetScore);
  Value count = e.sumLastAxis(e.cast(above, ft), /*keepdims=*/false);
  Value hit = e.builder().create<kc::CompareOp>(
      e.location(), KcEmitter::typeOf(count).clone(e.builder().getI1Type()),
      kc::CompareDirection::LT, count, e.splatLike(count, k - 0.5));
  return e.meanAll(e.cast(hit, ft));
}

} // namespace

Value reduceLossValues(OpBuilder &b, Location loc, Value values, Value weight,
                       Type floatType, LossReduction reduction, Value valid) {
  KcEmitter e(b, loc);
  if (getElementTypeOrSelf(values.getType()) != floatType)
    values = e.cast(values, floatType);
  if (weight && getElementTypeOrSelf(weight.getType()) != floatType)
    weight = e.cast(weight, floatType);
  // A scalar is the loss itself, unless weighed: then one value per example.
  if (KcEmitter::typeOf(values).getRank() == 0) {
    if (!weight)
      return values;
    values = e.mul(e.broadcastLike(values, weight), weight);
    weight = {};
  }
  // Negation commutes with every reduction below, exactly (rounding is
  // symmetric): the crossentropies' per-example -sum(t * log p) is reduced
  // first and the scalar negated, so the backward negates one scalar, not
  // a [batch] gradient inside the softmax-gradient kernel (mlp.keras's
  // compiled step was 11% slower with the negation per example).
  if (auto neg = values.getDefiningOp<kc::NegOp>(); neg && neg->use_empty()) {
    Value positive = neg.getOperand();
    neg->erase();
    return e.neg(reduceLossValues(b, loc, positive, weight, floatType,
                                  reduction, valid));
  }
  // Unweighted, the mean of per-example means over the last axis is the
  // mean of every element: one reduction instead of two (the IR the step
  // had before losses kept Keras's per-example values).
  bool mean = reduction == LossReduction::SumOverBatchSize ||
              reduction == LossReduction::Mean;
  if (!weight && !valid && mean)
    if (auto perExample = values.getDefiningOp<kc::ReduceMeanOp>();
        perExample && perExample->use_empty() && !perExample.getKeepdims() &&
        perExample.getAxes().size() == 1 &&
        perExample.getAxes()[0] ==
            KcEmitter::typeOf(perExample.getX()).getRank() - 1) {
      Value x = perExample.getX();
      perExample->erase();
      return e.meanAll(x);
    }
  Value w = weight ? weightLike(e, weight, values) : Value();
  if (w)
    values = e.mul(values, w);
  switch (reduction) {
  case LossReduction::Sum:
  case LossReduction::None: // refused by LossConfig::validate
    return e.sumAll(values);
  case LossReduction::SumOverBatchSize:
  case LossReduction::Mean:
    // Keras weighs valid values by total / valid: the mean of the valid.
    if (valid)
      return divideNoNan(e, e.sumAll(values), e.sumAll(valid));
    return e.meanAll(values);
  case LossReduction::MeanWithSampleWeight: {
    if (!w && !valid)
      return e.meanAll(values);
    Value divisor = w && valid ? e.mul(w, valid) : (w ? w : valid);
    return divideNoNan(e, e.sumAll(values), e.sumAll(divisor));
  }
  }
  llvm_unreachable("unknown reduction");
}

Value buildLoss(OpBuilder &b, Location loc, const LossConfig &loss, Value pred,
                Value target, Value weight, Value mask) {
  KcEmitter e(b, loc);
  losses::LossValues v;
  switch (loss.kind) {
  case LossKind::SparseCategoricalCrossentropy:
  case LossKind::CategoricalCrossentropy:
  case LossKind::BinaryCrossentropy:
  case LossKind::BinaryFocalCrossentropy:
  case LossKind::CategoricalFocalCrossentropy:
  case LossKind::KLDivergence:
  case LossKind::Poisson:
  case LossKind::CategoricalGeneralizedCrossEntropy:
    v = losses::probabilistic(e, loss, pred, target);
    break;
  case LossKind::Circle:
    v = losses::circle(e, loss, pred, target);
    break;
  case LossKind::MeanSquaredError:
  case LossKind::MeanAbsoluteError:
  case LossKind::MeanAbsolutePercentageError:
  case LossKind::MeanSquaredLogarithmicError:
  case LossKind::Huber:
  case LossKind::LogCosh:
  case LossKind::CosineSimilarity:
    v.values = losses::regression(e, loss, pred, target);
    break;
  case LossKind::Hinge:
  case LossKind::SquaredHinge:
  case LossKind::CategoricalHinge:
  case LossKind::Dice:
  case LossKind::Tversky:
    v.values = losses::marginAndOverlap(e, loss, pred, target);
    break;
  case LossKind::CTC: {
    // Keras computes ctc in float32 at least (its kernel takes f32 or f64).
    Value logits = pred;
    Type ft = KcEmitter::typeOf(pred).getElementType();
    if (!ft.isF32() && !ft.isF64())
      logits = e.cast(pred, b.getF32Type());
    v.values = b.create<kc::CtcLossOp>(
        loc,
        RankedTensorType::get({KcEmitter::typeOf(pred).getDimSize(0)},
                              KcEmitter::typeOf(logits).getElementType()),
        logits, target);
    break;
  }
  }
  Type ft = KcEmitter::typeOf(pred).getElementType();
  if (mask) {
    // Keras's apply_mask: the mask joins the sample weights (and the
    // values' own mask, ignore_class's).
    if (getElementTypeOrSelf(mask.getType()) != ft)
      mask = e.cast(mask, ft);
    v.values = e.mul(v.values, mask);
    v.valid = v.valid ? e.mul(v.valid, mask) : mask;
  }
  return reduceLossValues(b, loc, v.values, weight, ft, loss.reduction,
                          v.valid);
}

std::optional<MetricLoss> metricAsLoss(MetricKind kind) {
  std::optional<LossKind> loss;
  switch (kind) {
  case MetricKind::MeanAbsoluteError:
    loss = LossKind::MeanAbsoluteError;
    break;
  case MetricKind::MeanSquaredError:
    loss = LossKind::MeanSquaredError;
    break;
  case MetricKind::MeanAbsolutePercentageError:
    loss = LossKind::MeanAbsolutePercentageError;
    break;
  case MetricKind::MeanSquaredLogarithmicError:
    loss = LossKind::MeanSquaredLogarithmicError;
    break;
  case MetricKind::LogCoshError:
    loss = LossKind::LogCosh;
    break;
  case MetricKind::CosineSimilarity:
    loss = LossKind::CosineSimilarity;
    break;
  case MetricKind::KLDivergence:
    loss = LossKind::KLDivergence;
    break;
  case MetricKind::Poisson:
    loss = LossKind::Poisson;
    break;
  case MetricKind::Hinge:
    loss = LossKind::Hinge;
    break;
  case MetricKind::SquaredHinge:
    loss = LossKind::SquaredHinge;
    break;
  case MetricKind::CategoricalHinge:
    loss = LossKind::CategoricalHinge;
    break;
  case MetricKind::BinaryCrossentropy:
    loss = LossKind::BinaryCrossentropy;
    break;
  case MetricKind::CategoricalCrossentropy:
    loss = LossKind::CategoricalCrossentropy;
    break;
  case MetricKind::SparseCategoricalCrossentropy:
    loss = LossKind::SparseCategoricalCrossentropy;
    break;
  default:
    return std::nullopt;
  }
  MetricLoss m;
  m.loss.kind = *loss;
  if (kind == MetricKind::CosineSimilarity)
    m.scale = -1.0;
  return m;
}

Value buildMetric(OpBuilder &b, Location loc, MetricKind kind, Value pred,
                  Value target) {
  MetricConfig m;
  m.kind = kind;
  return buildMetric(b, loc, m, pred, target);
}

Value buildMetric(OpBuilder &b, Location loc, const MetricConfig &metric,
                  Value pred, Value target, Value mask) {
  KcEmitter e(b, loc);
  MetricKind kind = metric.kind;
  // The loss function's values, averaged unweighted.
  if (std::optional<MetricLoss> m = metricAsLoss(kind)) {
    Value v = buildLoss(b, loc, m->loss, pred, target, {}, mask);
    return m->scale == 1.0 ? v : e.mul(v, m->scale);
  }
  RankedTensorType predType = KcEmitter::typeOf(pred);
  Type ft = predType.getElementType();
  switch (kind) {
  case MetricKind::SparseCategoricalAccuracy:
    return meanEqual(e, argmaxAsFloat(e, pred, ft), e.cast(target, ft), mask);
  case MetricKind::CategoricalAccuracy:
    return meanEqual(e, argmaxAsFloat(e, pred, ft),
                     argmaxAsFloat(e, target, ft), mask);
  case MetricKind::BinaryAccuracy: {
    // Keras: cast(y_pred > 0.5) == y_true.
    Value gt = b.create<kc::CompareOp>(loc, predType.clone(b.getI1Type()),
                                       kc::CompareDirection::GT, pred,
                                       e.splatLike(pred, 0.5));
    return meanEqual(e, e.cast(gt, ft), target);
  }
  case MetricKind::SparseTopKCategoricalAccuracy:
    return meanInTopK(e, pred, b.create<kc::OneHotOp>(loc, predType, target),
                      metric.k);
  case MetricKind::TopKCategoricalAccuracy: {
    // Keras takes argmax(y_true) as the class.
    Value cls = b.create<kc::ArgmaxOp>(
        loc,
        RankedTensorType::get(predType.getShape().drop_back(), b.getI64Type()),
        target, b.getI64IntegerAttr(predType.getRank() - 1));
    return meanInTopK(e, pred, b.create<kc::OneHotOp>(loc, predType, cls),
                      metric.k);
  }
  case MetricKind::PearsonCorrelation:
    return e.meanAll(losses::pearsonCorrelation(e, pred, target));
  case MetricKind::ConcordanceCorrelation:
    return e.meanAll(losses::concordanceCorrelation(e, pred, target));
  default:
    llvm_unreachable("a loss metric is built above");
  }
}

} // namespace kcc
