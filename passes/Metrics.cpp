//===- Metrics.cpp - A stateful Keras metric's statistics as kc IR --------===//
//
// Each builder follows the update_state of its Keras class (keras 3.x,
// keras/src/metrics): the same comparisons, in the prediction's float type,
// so the counts match Keras's exactly and the sums to float rounding.
//
//===----------------------------------------------------------------------===//

#include "passes/Metrics.h"
#include "passes/KcEmitter.h"

#include "llvm/ADT/SmallVector.h"

using namespace mlir;

namespace kcc {

namespace {

using kc::CompareDirection;

/// A constant of `type` holding `values` (row-major).
Value constant(KcEmitter &e, RankedTensorType type,
               llvm::ArrayRef<double> values) {
  Type ft = type.getElementType();
  if (ft.isF64())
    return e.builder().create<kc::ConstantOp>(
        e.location(), DenseElementsAttr::get(type, values));
  llvm::SmallVector<float> f(values.begin(), values.end());
  return e.builder().create<kc::ConstantOp>(
      e.location(), DenseElementsAttr::get(type, llvm::ArrayRef<float>(f)));
}

Value reshape(KcEmitter &e, Value x, llvm::ArrayRef<int64_t> shape) {
  RankedTensorType t = KcEmitter::typeOf(x);
  if (t.getShape() == shape)
    return x;
  return e.builder().create<kc::ReshapeOp>(e.location(), t.clone(shape), x);
}

Value broadcast(KcEmitter &e, Value x, llvm::ArrayRef<int64_t> shape) {
  RankedTensorType t = KcEmitter::typeOf(x);
  if (t.getShape() == shape)
    return x;
  return e.builder().create<kc::BroadcastToOp>(e.location(), t.clone(shape), x);
}

/// 0/1 in `ft` where `dir(l, r)` holds.
Value compareAsFloat(KcEmitter &e, CompareDirection dir, Value l, Value r,
                     Type ft) {
  return e.cast(e.compare(dir, l, r), ft);
}

int64_t numel(RankedTensorType t) {
  int64_t n = 1;
  for (int64_t d : t.getShape())
    n *= d;
  return n;
}

/// `x` as [rows, last dim].
Value asRows(KcEmitter &e, Value x) {
  RankedTensorType t = KcEmitter::typeOf(x);
  int64_t last = t.getRank() ? t.getShape().back() : 1;
  return reshape(e, x, {numel(t) / last, last});
}

/// `x` as one flat vector.
Value flat(KcEmitter &e, Value x) {
  return reshape(e, x, {numel(KcEmitter::typeOf(x))});
}

/// Slice [c, c + 1) of the last axis, the axis kept.
Value lastAxisSlice(KcEmitter &e, Value x, int64_t c) {
  RankedTensorType t = KcEmitter::typeOf(x);
  llvm::SmallVector<int64_t> start(t.getRank(), 0), limit(t.getShape()),
      strides(t.getRank(), 1), shape(t.getShape());
  start.back() = c;
  limit.back() = c + 1;
  shape.back() = 1;
  return e.builder().create<kc::SliceOp>(
      e.location(), t.clone(shape), x, e.builder().getDenseI64ArrayAttr(start),
      e.builder().getDenseI64ArrayAttr(limit),
      e.builder().getDenseI64ArrayAttr(strides));
}

Value concat(KcEmitter &e, llvm::ArrayRef<Value> parts) {
  int64_t n = 0;
  for (Value p : parts)
    n += numel(KcEmitter::typeOf(p));
  RankedTensorType t = KcEmitter::typeOf(parts.front());
  llvm::SmallVector<Value> flatParts;
  for (Value p : parts)
    flatParts.push_back(flat(e, p));
  return e.builder().create<kc::ConcatOp>(e.location(), t.clone({n}), flatParts,
                                          e.builder().getI64IntegerAttr(0));
}

/// Keras's _filter_top_k: the k highest of each row kept, the others
/// NEG_INF. Exactly k, as ops.top_k picks them: of equal values the lower
/// index first, so class j is kept when fewer than k classes score more
/// or score the same at a lower index.
Value filterTopK(KcEmitter &e, Value pred, int64_t k) {
  RankedTensorType t = KcEmitter::typeOf(pred);
  Type ft = t.getElementType();
  Value rows = asRows(e, pred);
  auto shape = KcEmitter::typeOf(rows).getShape();
  int64_t n = shape[0], c = shape[1];
  // ahead[r, j, i]: class i is picked before class j.
  Value others = broadcast(e, reshape(e, rows, {n, 1, c}), {n, c, c});
  Value self = broadcast(e, reshape(e, rows, {n, c, 1}), {n, c, c});
  std::vector<double> lower(c * c, 0.0);
  for (int64_t j = 0; j < c; ++j)
    for (int64_t i = 0; i < j; ++i)
      lower[j * c + i] = 1.0;
  Value before = broadcast(
      e, constant(e, RankedTensorType::get({1, c, c}, ft), lower), {n, c, c});
  Value ahead = e.add(
      compareAsFloat(e, CompareDirection::GT, others, self, ft),
      e.mul(compareAsFloat(e, CompareDirection::EQ, others, self, ft), before));
  Value count = e.sumAxis(ahead, -1, /*keepdims=*/false);
  Value keep = compareAsFloat(e, CompareDirection::LT, count,
                              e.splatLike(count, k - 0.5), ft);
  Value filtered =
      e.add(e.mul(rows, keep), e.mul(e.rsub(1.0, keep), kMetricNegInf));
  return reshape(e, filtered, t.getShape());
}

/// [tp, fp, tn, fn], each [thresholds, labels].
Value confusionStatistics(KcEmitter &e, const MetricConfig &m, Value pred,
                          Value target) {
  Type ft = KcEmitter::typeOf(pred).getElementType();
  if (m.fromLogits)
    pred = e.sigmoid(pred);
  if (m.topK)
    pred = filterTopK(e, pred, *m.topK);
  if (m.classId) {
    pred = lastAxisSlice(e, pred, *m.classId);
    target = lastAxisSlice(e, target, *m.classId);
  }
  // y_true cast to bool.
  Value label = compareAsFloat(e, CompareDirection::NE, target,
                               e.splatLike(target, 0.0), ft);
  RankedTensorType pt = KcEmitter::typeOf(pred);
  int64_t labels = m.multiLabel ? pt.getShape().back() : 1;
  int64_t n = numel(pt) / labels;
  std::vector<double> thresholds = m.resolvedThresholds();
  int64_t nt = static_cast<int64_t>(thresholds.size());
  Value x = reshape(e, pred, {n, labels, 1});
  label = reshape(e, label, {n, labels, 1});
  std::vector<double> cut(nt);
  if (m.thresholdsEvenlyDistributed()) {
    // Keras's bucketed count: ceil(clip(p, 0, 1) * (n - 1)) - 1 >= i,
    // i.e. clip(p, 0, 1) * (n - 1) > i; with epsilon ends the first bucket
    // takes every prediction (relu of the bucket index).
    x = e.mul(e.clip(x, 0.0, 1.0), static_cast<double>(nt - 1));
    for (int64_t i = 0; i < nt; ++i)
      cut[i] = static_cast<double>(i);
    if (m.thresholdsWithEpsilon())
      cut[0] = -1.0;
  } else {
    cut = thresholds;
  }
  llvm::SmallVector<int64_t> full = {n, labels, nt};
  Value cuts = broadcast(
      e, constant(e, RankedTensorType::get({1, 1, nt}, ft), cut), full);
  Value positive =
      compareAsFloat(e, CompareDirection::GT, broadcast(e, x, full), cuts, ft);
  // AUC's label_weights without multi_label: each value weighs its label's
  // weight (the last axis) in every count.
  Value weight;
  if (!m.labelWeights.empty() && !m.multiLabel) {
    int64_t classes = pt.getRank() ? pt.getShape().back() : 1;
    Value w =
        constant(e, RankedTensorType::get({1, classes}, ft), m.labelWeights);
    w = broadcast(e, w, {numel(pt) / classes, classes});
    weight = reshape(e, w, {n, labels, 1});
    positive = e.mul(positive, broadcast(e, weight, full));
  }
  Value tp = e.sumAxis(e.mul(positive, broadcast(e, label, full)), 0, false);
  Value predicted = e.sumAxis(positive, 0, false);
  Value actual =
      broadcast(e, e.sumAxis(weight ? e.mul(label, weight) : label, 0, false),
                {labels, nt}); // [labels, nt]
  Value all = weight ? broadcast(e, e.sumAxis(weight, 0, false), {labels, nt})
                     : e.splatLike(actual, static_cast<double>(n));
  Value fp = e.sub(predicted, tp);
  Value fn = e.sub(actual, tp);
  Value tn = e.sub(e.sub(all, actual), fp);
  // Keras's layout: [thresholds, labels].
  auto layout = [&](Value v) -> Value {
    if (labels == 1)
      return reshape(e, v, {nt});
    RankedTensorType t = KcEmitter::typeOf(v);
    return e.builder().create<kc::TransposeOp>(
        e.location(), t.clone({nt, labels}), v,
        e.builder().getDenseI64ArrayAttr({1, 0}));
  };
  return concat(e, {layout(tp), layout(fp), layout(tn), layout(fn)});
}

/// [tp, fp, fn, support], each [classes].
Value fbetaStatistics(KcEmitter &e, const MetricConfig &m, Value pred,
                      Value target) {
  Type ft = KcEmitter::typeOf(pred).getElementType();
  Value yp;
  if (m.threshold) {
    yp = compareAsFloat(e, CompareDirection::GT, pred,
                        e.splatLike(pred, *m.threshold), ft);
  } else {
    // The row's maximum, but never a row of zeros.
    Value rowMax = e.broadcastLike(e.maxAxis(pred, -1, true), pred);
    yp = e.mul(compareAsFloat(e, CompareDirection::GE, pred, rowMax, ft),
               compareAsFloat(e, CompareDirection::GT, e.abs(pred),
                              e.splatLike(pred, 1e-9), ft));
  }
  Value yt = e.cast(target, ft);
  Value notYt = e.rsub(1.0, yt);
  Value tp = e.sumAxis(e.mul(yp, yt), 0, false);
  Value fp = e.sumAxis(e.mul(yp, notYt), 0, false);
  Value fn = e.sumAxis(e.mul(e.rsub(1.0, yp), yt), 0, false);
  Value support = e.sumAxis(yt, 0, false);
  return concat(e, {tp, fp, fn, support});
}

/// Class indices as floats, truncated as Keras's cast to int truncates.
Value asIndices(KcEmitter &e, Value x, Type ft) {
  RankedTensorType t = KcEmitter::typeOf(x);
  if (isa<FloatType>(t.getElementType()))
    x = e.cast(x, e.builder().getI32Type());
  return e.cast(x, ft);
}

Value argmaxIndices(KcEmitter &e, Value x, Type ft) {
  RankedTensorType t = KcEmitter::typeOf(x);
  auto idx =
      RankedTensorType::get(t.getShape().drop_back(), e.builder().getI64Type());
  return e.cast(
      e.builder().create<kc::ArgmaxOp>(
          e.location(), idx, x, e.builder().getI64IntegerAttr(t.getRank() - 1)),
      ft);
}

/// The confusion matrix [classes, classes], row = true class.
Value iouStatistics(KcEmitter &e, const MetricConfig &m, Value pred,
                    Value target) {
  Type ft = KcEmitter::typeOf(pred).getElementType();
  Value t =
      m.sparseYTrue ? asIndices(e, target, ft) : argmaxIndices(e, target, ft);
  Value p;
  if (m.kind == MetricKind::BinaryIoU)
    p = compareAsFloat(e, CompareDirection::GE, pred,
                       e.splatLike(pred, m.threshold.value_or(0.5)), ft);
  else
    p = m.sparseYPred ? asIndices(e, pred, ft) : argmaxIndices(e, pred, ft);
  t = flat(e, t);
  p = flat(e, p);
  int64_t n = KcEmitter::typeOf(t).getShape()[0], c = m.numClasses;
  std::vector<double> ids(c);
  for (int64_t i = 0; i < c; ++i)
    ids[i] = static_cast<double>(i);
  Value classes =
      broadcast(e, constant(e, RankedTensorType::get({1, c}, ft), ids), {n, c});
  // One-hot rows; an index out of [0, classes) matches no class, as Keras's
  // bounds mask drops it.
  Value trueHot =
      compareAsFloat(e, CompareDirection::EQ,
                     broadcast(e, reshape(e, t, {n, 1}), {n, c}), classes, ft);
  Value predHot =
      compareAsFloat(e, CompareDirection::EQ,
                     broadcast(e, reshape(e, p, {n, 1}), {n, c}), classes, ft);
  if (m.ignoreClass) {
    Value keep = compareAsFloat(e, CompareDirection::NE, t,
                                e.splatLike(t, *m.ignoreClass), ft);
    trueHot = e.mul(trueHot, broadcast(e, reshape(e, keep, {n, 1}), {n, c}));
  }
  Value pairs = e.mul(broadcast(e, reshape(e, trueHot, {n, c, 1}), {n, c, c}),
                      broadcast(e, reshape(e, predHot, {n, 1, c}), {n, c, c}));
  return flat(e, e.sumAxis(pairs, 0, false));
}

/// [sum, squared_sum, residual, count] per column, then the value count.
Value r2Statistics(KcEmitter &e, Value pred, Value target) {
  Value yt = asRows(e, target), yp = asRows(e, pred);
  auto shape = KcEmitter::typeOf(yt).getShape();
  int64_t n = shape[0], c = shape[1];
  Value sum = e.sumAxis(yt, 0, false);
  Value squared = e.sumAxis(e.mul(yt, yt), 0, false);
  Value d = e.sub(yt, yp);
  Value residual = e.sumAxis(e.mul(d, d), 0, false);
  Value count = e.splatLike(sum, static_cast<double>(n));
  Value values = e.splat(
      RankedTensorType::get({1}, KcEmitter::typeOf(sum).getElementType()),
      static_cast<double>(n * c));
  return concat(e, {sum, squared, residual, count, values});
}

/// [sum of per-example mean squared errors, examples].
Value rmseStatistics(KcEmitter &e, Value pred, Value target) {
  RankedTensorType t = KcEmitter::typeOf(pred);
  Value d = e.sub(pred, e.cast(target, t.getElementType()));
  Value sq = e.mul(d, d);
  int64_t examples = t.getRank() ? t.getShape()[0] : 1;
  Value perExample =
      t.getRank() > 1
          ? e.meanAxis(reshape(e, sq, {examples, numel(t) / examples}), -1,
                       false)
          : sq;
  Value total = reshape(e, e.sumAll(perExample), {1});
  Value count = e.splatLike(total, static_cast<double>(examples));
  return concat(e, {total, count});
}

} // namespace

std::string checkMetricShape(const MetricConfig &m, RankedTensorType pred) {
  std::string cls = metricClassName(m.kind).str();
  int64_t rank = pred.getRank();
  int64_t last = rank ? pred.getShape().back() : 1;
  if ((m.kind == MetricKind::FBetaScore || m.kind == MetricKind::F1Score ||
       m.kind == MetricKind::R2Score) &&
      rank != 2)
    return cls +
           " expects 2D predictions (batch_size, output_dim), got "
           "rank " +
           std::to_string(rank);
  if (m.classId && (rank < 2 || *m.classId >= last))
    return cls + ": class_id " + std::to_string(*m.classId) +
           " needs predictions of at least " + std::to_string(*m.classId + 1) +
           " classes on a last axis";
  if (m.topK && rank < 1)
    return cls + ": top_k needs a class axis";
  if (m.multiLabel && rank != 2)
    return cls + ": multi_label expects 2D predictions (batch, labels)";
  if (!m.labelWeights.empty() &&
      static_cast<int64_t>(m.labelWeights.size()) != last)
    return cls + ": " + std::to_string(m.labelWeights.size()) +
           " label_weights for predictions of " + std::to_string(last) +
           " labels";
  bool argmaxPred =
      (m.kind == MetricKind::IoU || m.kind == MetricKind::MeanIoU ||
       m.kind == MetricKind::OneHotIoU ||
       m.kind == MetricKind::OneHotMeanIoU) &&
      !m.sparseYPred;
  if (argmaxPred && rank < 1)
    return cls + " needs a class axis to take the argmax of";
  return "";
}

Value buildMetricStatistics(OpBuilder &b, Location loc, const MetricConfig &m,
                            Value pred, Value target) {
  KcEmitter e(b, loc);
  if (isConfusionMetric(m.kind))
    return confusionStatistics(e, m, pred, target);
  switch (m.kind) {
  case MetricKind::FBetaScore:
  case MetricKind::F1Score:
    return fbetaStatistics(e, m, pred, target);
  case MetricKind::IoU:
  case MetricKind::MeanIoU:
  case MetricKind::BinaryIoU:
  case MetricKind::OneHotIoU:
  case MetricKind::OneHotMeanIoU:
    return iouStatistics(e, m, pred, target);
  case MetricKind::R2Score:
    return r2Statistics(e, pred, target);
  case MetricKind::RootMeanSquaredError:
    return rmseStatistics(e, pred, target);
  default:
    llvm_unreachable("not a stateful metric");
  }
}

} // namespace kcc
