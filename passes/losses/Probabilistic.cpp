//===- Probabilistic.cpp - Crossentropies, focal, KL and Poisson ----------===//
//
// keras/src/losses/losses.py's probabilistic functions over
// keras/src/backend/jax/nn.py's crossentropies. Probabilities are clipped to
// [eps, 1 - eps] with kc.max/kc.min, so the gradient is zero where clipped,
// as with jnp.clip; from logits the stable log_softmax / log_sigmoid forms.
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/losses/LossFunctions.h"

using namespace mlir;

namespace kcc {
namespace losses {

namespace {

/// `target` pulled toward uniform over `classes` values (Keras's
/// label_smoothing): t (1 - s) + s / classes.
Value smooth(KcEmitter &e, Value target, double s, double classes) {
  if (s == 0)
    return target;
  return e.add(e.mul(target, 1.0 - s), s / classes);
}

/// log of the probabilities `p` normalized along `axis` and clipped
/// (backend categorical_crossentropy, from_logits=False), or log_softmax of
/// logits.
Value logProbs(KcEmitter &e, Value pred, int64_t axis, bool fromLogits) {
  if (fromLogits)
    return e.builder().create<kc::LogSoftmaxOp>(
        e.location(), pred.getType(), pred,
        e.builder().getI64IntegerAttr(axis));
  Value sum = e.broadcastLike(e.sumAxis(pred, axis, /*keepdims=*/true), pred);
  return e.log(e.clip(e.div(pred, sum), kKerasEpsilon, 1.0 - kKerasEpsilon));
}

/// Elementwise binary crossentropy (backend binary_crossentropy). From
/// logits the stable form max(x, 0) - x z + log(1 + exp(-|x|)), which equals
/// Keras's -z log_sigmoid(x) - (1 - z) log_sigmoid(-x).
Value binaryCrossentropy(KcEmitter &e, Value pred, Value z, bool fromLogits) {
  if (fromLogits) {
    Value softplus = e.log(e.add(e.exp(e.neg(e.abs(pred))), 1.0));
    return e.add(e.sub(e.relu(pred), e.mul(pred, z)), softplus);
  }
  Value p = e.clip(pred, kKerasEpsilon, 1.0 - kKerasEpsilon);
  Value pos = e.mul(z, e.log(p));
  Value neg = e.mul(e.rsub(1.0, z), e.log(e.rsub(1.0, p)));
  return e.neg(e.add(pos, neg));
}

/// sparse_categorical_crossentropy with ignore_class: the one-hot of an
/// ignored (or out-of-range) class is a zero row, and its value is masked.
LossValues sparseCrossentropy(KcEmitter &e, const LossConfig &loss, Value pred,
                              Value labels) {
  OpBuilder &b = e.builder();
  auto predType = KcEmitter::typeOf(pred);
  Value oneHot = b.create<kc::OneHotOp>(e.location(), predType, labels);
  int64_t axis = predType.getRank() - 1;
  Value values = e.neg(e.sumAxis(
      e.mul(oneHot, logProbs(e, pred, axis, loss.fromLogits)), axis, false));
  if (!loss.ignoreClass)
    return {values, {}};
  Type ft = predType.getElementType();
  Value asFloat = e.cast(labels, ft);
  Value ignored =
      e.compare(kc::CompareDirection::EQ, asFloat,
                e.splatLike(asFloat, static_cast<double>(*loss.ignoreClass)));
  Value valid = e.rsub(1.0, e.cast(ignored, ft));
  return {e.mul(values, valid), valid};
}

/// Keras's binary_focal_crossentropy: bce of sigmoid(x) (from logits) or of
/// the clipped probabilities, times (1 - p_t)^gamma with p_t the
/// unclipped probability of the target, optionally class-balanced by alpha.
Value binaryFocal(KcEmitter &e, const LossConfig &loss, Value pred, Value z) {
  Value p = loss.fromLogits ? e.sigmoid(pred) : pred;
  Value bce = binaryCrossentropy(e, p, z, /*fromLogits=*/false);
  Value pt = e.add(e.mul(z, p), e.mul(e.rsub(1.0, z), e.rsub(1.0, p)));
  Value focal =
      e.mul(e.pow(e.rsub(1.0, pt), e.splatLike(pt, loss.resolvedGamma())), bce);
  if (!loss.applyClassBalancing)
    return focal;
  double alpha = loss.resolvedAlpha();
  Value weight = e.add(e.mul(z, alpha), e.mul(e.rsub(1.0, z), 1.0 - alpha));
  return e.mul(weight, focal);
}

/// Keras's categorical_focal_crossentropy: softmax from logits, normalized
/// and clipped probabilities, alpha (1 - p)^gamma times -t log p, summed
/// over the class axis.
Value categoricalFocal(KcEmitter &e, const LossConfig &loss, Value pred,
                       Value t, int64_t axis) {
  Value p = pred;
  if (loss.fromLogits)
    p = e.builder().create<kc::SoftmaxOp>(e.location(), pred.getType(), pred,
                                          e.builder().getI64IntegerAttr(axis));
  Value sum = e.broadcastLike(e.sumAxis(p, axis, /*keepdims=*/true), p);
  Value out = e.clip(e.div(p, sum), kKerasEpsilon, 1.0 - kKerasEpsilon);
  Value cce = e.neg(e.mul(t, e.log(out)));
  Value modulating =
      e.pow(e.rsub(1.0, out), e.splatLike(out, loss.resolvedGamma()));
  Value focal = e.mul(e.mul(modulating, loss.resolvedAlpha()), cce);
  return e.sumAxis(focal, axis, /*keepdims=*/false);
}

} // namespace

LossValues probabilistic(KcEmitter &e, const LossConfig &loss, Value pred,
                         Value target) {
  RankedTensorType predType = KcEmitter::typeOf(pred);
  int64_t rank = predType.getRank();
  int64_t axis = normalizeAxis(loss.resolvedAxis().value_or(-1), rank);
  double classes = static_cast<double>(predType.getDimSize(axis));
  switch (loss.kind) {
  case LossKind::SparseCategoricalCrossentropy:
    return sparseCrossentropy(e, loss, pred, target);
  case LossKind::CategoricalCrossentropy: {
    Value t = smooth(e, target, loss.labelSmoothing, classes);
    Value lp = logProbs(e, pred, axis, loss.fromLogits);
    return {e.neg(e.sumAxis(e.mul(t, lp), axis, false)), {}};
  }
  case LossKind::BinaryCrossentropy: {
    Value z = smooth(e, target, loss.labelSmoothing, 2.0);
    return {e.meanAxis(binaryCrossentropy(e, pred, z, loss.fromLogits), axis,
                       false),
            {}};
  }
  case LossKind::BinaryFocalCrossentropy: {
    Value z = smooth(e, target, loss.labelSmoothing, 2.0);
    return {e.meanAxis(binaryFocal(e, loss, pred, z), axis, false), {}};
  }
  case LossKind::CategoricalFocalCrossentropy: {
    Value t = smooth(e, target, loss.labelSmoothing, classes);
    return {categoricalFocal(e, loss, pred, t, axis), {}};
  }
  case LossKind::KLDivergence: {
    // Both clipped to [eps, 1].
    Value t = e.clip(target, kKerasEpsilon, 1.0);
    Value p = e.clip(pred, kKerasEpsilon, 1.0);
    return {e.sumAxis(e.mul(t, e.log(e.div(t, p))), -1, false), {}};
  }
  case LossKind::CategoricalGeneralizedCrossEntropy: {
    // (1 - p^q) / q of the target class's probability, unclipped.
    Value oneHot =
        e.builder().create<kc::OneHotOp>(e.location(), predType, target);
    Value p = e.sumAxis(e.mul(oneHot, pred), -1, false);
    Value powered = e.pow(p, e.splatLike(p, loss.q));
    return {e.mul(e.rsub(1.0, powered), 1.0 / loss.q), {}};
  }
  case LossKind::Poisson: {
    Value logP = e.log(e.add(pred, kKerasEpsilon));
    return {e.meanAxis(e.sub(pred, e.mul(target, logP)), -1, false), {}};
  }
  default:
    llvm_unreachable("not a probabilistic loss");
  }
}

} // namespace losses
} // namespace kcc
