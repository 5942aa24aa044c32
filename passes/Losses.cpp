//===- Losses.cpp - Keras losses and metrics as kc IR ---------------------===//
//
// Each loss follows keras/src/backend/*/nn.py and keras/src/losses: the
// per-example loss, then the mean over every remaining element (Keras's
// "sum_over_batch_size" reduction). Probabilities are clipped to
// [eps, 1 - eps] with kc.max/kc.min so the gradient is zero where clipped,
// as with Keras's clip.
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/KcEmitter.h"

#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace kcc {

RankedTensorType targetType(LossKind kind, RankedTensorType pred) {
  if (!pred || !isa<FloatType>(pred.getElementType()) || pred.getRank() < 1)
    return {};
  if (kind != LossKind::SparseCategoricalCrossentropy)
    return pred;
  return RankedTensorType::get(pred.getShape().drop_back(),
                               IntegerType::get(pred.getContext(), 32));
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

/// Keras's weighted sum_over_batch_size of per-element losses: the mean of
/// `values * w`, or of `values` without weights.
Value weightedMean(KcEmitter &e, Value values, Value w) {
  if (!w)
    return e.meanAll(values);
  return e.meanAll(e.mul(values, weightLike(e, w, values)));
}

/// log(p) of probabilities normalized along the class axis and clipped to
/// [eps, 1 - eps] (Keras's categorical_crossentropy, from_logits=False).
Value clippedLogProbs(KcEmitter &e, Value p) {
  Value sum = e.broadcastLike(e.sumLastAxis(p, /*keepdims=*/true), p);
  Value clipped = e.min(e.max(e.div(p, sum), e.splatLike(p, kKerasEpsilon)),
                        e.splatLike(p, 1.0 - kKerasEpsilon));
  return e.log(clipped);
}

/// -sum(target * log_prob) over the class axis, then the (weighted) mean.
Value crossentropy(KcEmitter &e, Value oneHot, Value logProbs, Value w) {
  return e.neg(
      weightedMean(e, e.sumLastAxis(e.mul(oneHot, logProbs), false), w));
}

Value logProbs(KcEmitter &e, Value pred, bool fromLogits) {
  if (!fromLogits)
    return clippedLogProbs(e, pred);
  RankedTensorType t = KcEmitter::typeOf(pred);
  return e.builder().create<kc::LogSoftmaxOp>(
      e.location(), t, pred, e.builder().getI64IntegerAttr(t.getRank() - 1));
}

/// Elementwise binary crossentropy. From logits the stable form
/// max(x, 0) - x * z + log(1 + exp(-|x|)), which equals Keras's
/// -z log_sigmoid(x) - (1 - z) log_sigmoid(-x).
Value binaryCrossentropy(KcEmitter &e, Value pred, Value z, bool fromLogits) {
  if (fromLogits) {
    Value softplus = e.log(e.add(e.exp(e.neg(e.abs(pred))), 1.0));
    return e.add(e.sub(e.relu(pred), e.mul(pred, z)), softplus);
  }
  Value p = e.min(e.max(pred, e.splatLike(pred, kKerasEpsilon)),
                  e.splatLike(pred, 1.0 - kKerasEpsilon));
  Value one = e.splatLike(pred, 1.0);
  Value pos = e.mul(z, e.log(p));
  Value negTerm = e.mul(e.sub(one, z), e.log(e.sub(one, p)));
  return e.neg(e.add(pos, negTerm));
}

/// Fraction of equal elements of two float tensors of one type.
Value meanEqual(KcEmitter &e, Value a, Value b) {
  RankedTensorType t = KcEmitter::typeOf(a);
  auto maskType = t.clone(e.builder().getI1Type());
  Value eq = e.builder().create<kc::CompareOp>(
      e.location(), maskType, kc::CompareDirection::EQ, a, b);
  return e.meanAll(e.cast(eq, t.getElementType()));
}

Value argmaxAsFloat(KcEmitter &e, Value x, Type floatType) {
  RankedTensorType t = KcEmitter::typeOf(x);
  auto idxType = RankedTensorType::get(t.getShape().drop_back(),
                                       e.builder().getI64Type());
  Value idx = e.builder().create<kc::ArgmaxOp>(
      e.location(), idxType, x, e.builder().getI64IntegerAttr(t.getRank() - 1));
  return e.cast(idx, floatType);
}

/// Keras's in_top_k: the fraction of rows whose target class scores at
/// least the k-th highest prediction, i.e. fewer than k classes score
/// strictly more (ties count as hits). `oneHot` marks the target class.
Value meanInTopK(KcEmitter &e, Value pred, Value oneHot) {
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
      kc::CompareDirection::LT, count, e.splatLike(count, kTopK - 0.5));
  return e.meanAll(e.cast(hit, ft));
}

} // namespace

Value buildLoss(OpBuilder &b, Location loc, LossKind kind, bool fromLogits,
                Value pred, Value target, Value weight) {
  KcEmitter e(b, loc);
  RankedTensorType predType = KcEmitter::typeOf(pred);
  switch (kind) {
  case LossKind::SparseCategoricalCrossentropy: {
    Value oneHot = b.create<kc::OneHotOp>(loc, predType, target);
    return crossentropy(e, oneHot, logProbs(e, pred, fromLogits), weight);
  }
  case LossKind::CategoricalCrossentropy:
    return crossentropy(e, target, logProbs(e, pred, fromLogits), weight);
  case LossKind::BinaryCrossentropy:
    return weightedMean(e, binaryCrossentropy(e, pred, target, fromLogits),
                        weight);
  case LossKind::MeanSquaredError: {
    Value d = e.sub(target, pred);
    return weightedMean(e, e.mul(d, d), weight);
  }
  }
  llvm_unreachable("unknown loss");
}

Value reduceLossValues(OpBuilder &b, Location loc, Value values, Value weight,
                       Type floatType) {
  KcEmitter e(b, loc);
  if (getElementTypeOrSelf(values.getType()) != floatType)
    values = e.cast(values, floatType);
  if (KcEmitter::typeOf(values).getRank() == 0)
    return values;
  if (weight && getElementTypeOrSelf(weight.getType()) != floatType)
    weight = e.cast(weight, floatType);
  return weightedMean(e, values, weight);
}

Value buildMetric(OpBuilder &b, Location loc, MetricKind kind, Value pred,
                  Value target) {
  KcEmitter e(b, loc);
  RankedTensorType predType = KcEmitter::typeOf(pred);
  Type ft = predType.getElementType();
  switch (kind) {
  case MetricKind::SparseCategoricalAccuracy:
    return meanEqual(e, argmaxAsFloat(e, pred, ft), e.cast(target, ft));
  case MetricKind::CategoricalAccuracy:
    return meanEqual(e, argmaxAsFloat(e, pred, ft), argmaxAsFloat(e, target, ft));
  case MetricKind::BinaryAccuracy: {
    // Keras: cast(y_pred > 0.5) == y_true.
    Value gt = b.create<kc::CompareOp>(loc, predType.clone(b.getI1Type()),
                                       kc::CompareDirection::GT, pred,
                                       e.splatLike(pred, 0.5));
    return meanEqual(e, e.cast(gt, ft), target);
  }
  case MetricKind::SparseTopKCategoricalAccuracy:
    return meanInTopK(e, pred, b.create<kc::OneHotOp>(loc, predType, target));
  case MetricKind::TopKCategoricalAccuracy: {
    // Keras takes argmax(y_true) as the class.
    Value cls = b.create<kc::ArgmaxOp>(
        loc,
        RankedTensorType::get(predType.getShape().drop_back(), b.getI64Type()),
        target, b.getI64IntegerAttr(predType.getRank() - 1));
    return meanInTopK(e, pred, b.create<kc::OneHotOp>(loc, predType, cls));
  }
  case MetricKind::MeanAbsoluteError:
    return e.meanAll(e.abs(e.sub(target, pred)));
  case MetricKind::MeanSquaredError: {
    Value d = e.sub(target, pred);
    return e.meanAll(e.mul(d, d));
  }
  }
  llvm_unreachable("unknown metric");
}

} // namespace kcc
