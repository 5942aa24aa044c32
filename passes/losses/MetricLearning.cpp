//===- MetricLearning.cpp - Circle loss -----------------------------------===//
//
// keras/src/losses/losses.py's circle: a loss over the batch's pairs, from
// the cosine distances of its (already L2-normalized) embeddings and
// whether the pairs' integer labels agree. Composed of kc ops only, so
// autodiff differentiates it like any other loss.
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/losses/LossFunctions.h"

#include <limits>

using namespace mlir;

namespace kcc {
namespace losses {

namespace {

/// The [n, n] identity of `like`'s type.
Value identity(KcEmitter &e, Value like) {
  RankedTensorType t = KcEmitter::typeOf(like);
  int64_t n = t.getDimSize(0);
  Type ft = t.getElementType();
  llvm::SmallVector<Attribute> values(n * n, e.builder().getFloatAttr(ft, 0.0));
  for (int64_t i = 0; i < n; ++i)
    values[i * n + i] = e.builder().getFloatAttr(ft, 1.0);
  return e.builder().create<kc::ConstantOp>(e.location(),
                                            DenseElementsAttr::get(t, values));
}

/// ops.logsumexp(where(mask, x, -inf), axis=1) as jax computes it: shifted
/// by the row's maximum (0 for a row with nothing selected), and -inf for
/// such a row. The empty rows' sums are replaced by 1 before the log, so
/// their gradients are zeros rather than 0/0 (the selects discard them
/// either way).
Value maskedLogSumExp(KcEmitter &e, Value mask, Value x) {
  Value negInf = e.splatLike(x, -std::numeric_limits<double>::infinity());
  Value masked = e.select(mask, x, negInf);
  Value rowMax = e.maxAxis(masked, 1, /*keepdims=*/true);
  Value finite =
      e.compare(kc::CompareDirection::GT, rowMax,
                e.splatLike(rowMax, -std::numeric_limits<double>::infinity()));
  Value shift = e.select(finite, rowMax, e.splatLike(rowMax, 0.0));
  Value sum =
      e.sumAxis(e.exp(e.sub(masked, e.broadcastLike(shift, masked))), 1, true);
  Value empty = e.compare(kc::CompareDirection::EQ, sum, e.splatLike(sum, 0.0));
  Value safe = e.select(empty, e.splatLike(sum, 1.0), sum);
  Value lse = e.select(
      empty, e.splatLike(sum, -std::numeric_limits<double>::infinity()),
      e.add(e.log(safe), shift));
  RankedTensorType t = KcEmitter::typeOf(lse);
  return e.builder().create<kc::ReshapeOp>(e.location(),
                                           t.clone({t.getDimSize(0)}), lse);
}

/// softplus(x) = max(x, 0) + log(1 + exp(-|x|)), as jax.nn.softplus.
Value softplus(KcEmitter &e, Value x) {
  return e.add(e.relu(x), e.log(e.add(e.exp(e.neg(e.abs(x))), 1.0)));
}

} // namespace

LossValues circle(KcEmitter &e, const LossConfig &loss, Value pred,
                  Value labels) {
  OpBuilder &b = e.builder();
  RankedTensorType predType = KcEmitter::typeOf(pred);
  Type ft = predType.getElementType();
  int64_t n = predType.getDimSize(0);
  auto square = RankedTensorType::get({n, n}, ft);
  Value similarity = b.create<kc::MatmulOp>(e.location(), square, pred, pred,
                                            /*transposeLhs=*/false,
                                            /*transposeRhs=*/true);
  Value distance = e.relu(e.rsub(1.0, similarity));

  // Pairs with equal labels are positives (less the diagonal), the others
  // negatives.
  Value l = e.cast(labels, ft);
  auto column = RankedTensorType::get({n, 1}, ft);
  auto row = RankedTensorType::get({1, n}, ft);
  Value li = e.broadcastLike(b.create<kc::ReshapeOp>(e.location(), column, l),
                             distance);
  Value lj =
      e.broadcastLike(b.create<kc::ReshapeOp>(e.location(), row, l), distance);
  Value same = e.cast(e.compare(kc::CompareDirection::EQ, li, lj), ft);
  Value positive = loss.removeDiagonal
                       ? e.mul(same, e.rsub(1.0, identity(e, distance)))
                       : same;
  Value negative = e.rsub(1.0, same);

  double margin = loss.margin, gamma = loss.resolvedGamma();
  Value posWeights = e.relu(e.mul(e.add(distance, margin), positive));
  Value negWeights = e.relu(e.mul(e.rsub(1.0 + margin, distance), negative));
  Value posTerms = e.mul(e.mul(posWeights, e.rsub(margin, distance)), -gamma);
  Value negTerms =
      e.mul(e.mul(negWeights, e.rsub(1.0 - margin, distance)), gamma);
  auto isSet = [&](Value mask) {
    return e.compare(kc::CompareDirection::NE, mask, e.splatLike(mask, 0.0));
  };
  Value pLoss = maskedLogSumExp(e, isSet(positive), posTerms);
  Value nLoss = maskedLogSumExp(e, isSet(negative), negTerms);
  Value values = softplus(e, e.add(pLoss, nLoss));
  // Keras masks the values that are not positive (the examples with no
  // positive or no negative pair): the mean is over the others.
  Value valid = e.cast(
      e.compare(kc::CompareDirection::GT, values, e.splatLike(values, 0.0)),
      ft);
  return {e.mul(values, valid), valid};
}

} // namespace losses
} // namespace kcc
