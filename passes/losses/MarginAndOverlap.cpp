//===- MarginAndOverlap.cpp - Hinge losses, Dice and Tversky --------------===//
//
// keras/src/losses/losses.py's hinge functions (margins of +-1 targets) and
// its segmentation ones (overlaps of a prediction with its target).
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/losses/LossFunctions.h"

using namespace mlir;

namespace kcc {
namespace losses {

namespace {

/// Keras's convert_binary_labels_to_hinge: when every target is 0 or 1
/// (checked over the whole batch, as Keras does), 2 t - 1; else t as it is.
Value hingeLabels(KcEmitter &e, Value t) {
  Type ft = KcEmitter::typeOf(t).getElementType();
  Value notZero =
      e.cast(e.compare(kc::CompareDirection::NE, t, e.splatLike(t, 0.0)), ft);
  Value notOne =
      e.cast(e.compare(kc::CompareDirection::NE, t, e.splatLike(t, 1.0)), ft);
  Value others = e.sumAll(e.mul(notZero, notOne));
  Value binary = e.cast(
      e.compare(kc::CompareDirection::EQ, others, e.splatLike(others, 0.0)),
      ft);
  // t + binary * (t - 1): 2 t - 1 when binary, t otherwise.
  return e.add(t, e.mul(e.broadcastLike(binary, t), e.add(t, -1.0)));
}

/// The sum of `x` over `axis`, or over every axis when unset (Dice's and
/// Tversky's axis=None: one value for the whole batch).
Value sumOver(KcEmitter &e, Value x, std::optional<int64_t> axis) {
  return axis ? e.sumAxis(x, *axis, false) : e.sumAll(x);
}

} // namespace

Value marginAndOverlap(KcEmitter &e, const LossConfig &loss, Value pred,
                       Value target) {
  switch (loss.kind) {
  case LossKind::Hinge:
  case LossKind::SquaredHinge: {
    Value t = hingeLabels(e, target);
    Value margin = e.relu(e.rsub(1.0, e.mul(t, pred)));
    if (loss.kind == LossKind::SquaredHinge)
      margin = e.mul(margin, margin);
    return e.meanAxis(margin, -1, false);
  }
  case LossKind::CategoricalHinge: {
    Value pos = e.sumAxis(e.mul(target, pred), -1, false);
    Value neg = e.maxAxis(e.mul(e.rsub(1.0, target), pred), -1, false);
    return e.relu(e.add(e.sub(neg, pos), 1.0));
  }
  case LossKind::Dice: {
    std::optional<int64_t> axis = loss.resolvedAxis();
    Value intersection = sumOver(e, e.mul(target, pred), axis);
    Value total = e.add(e.add(sumOver(e, target, axis), sumOver(e, pred, axis)),
                        kKerasEpsilon);
    return e.rsub(1.0, e.div(e.mul(intersection, 2.0), total));
  }
  case LossKind::Tversky: {
    // As released Keras (3.15) computes it: alpha weighs the target mass
    // the prediction misses, beta the prediction outside the target.
    // Keras's main branch has since swapped the two; saved models and the
    // fixtures come from the release.
    std::optional<int64_t> axis = loss.resolvedAxis();
    Value intersection = sumOver(e, e.mul(target, pred), axis);
    Value missed = sumOver(e, e.mul(e.rsub(1.0, pred), target), axis);
    Value extra = sumOver(e, e.mul(pred, e.rsub(1.0, target)), axis);
    Value denom =
        e.add(e.add(intersection, e.mul(missed, loss.resolvedAlpha())),
              e.mul(extra, loss.beta));
    return e.rsub(1.0, e.div(intersection, e.add(denom, kKerasEpsilon)));
  }
  default:
    llvm_unreachable("not a hinge or overlap loss");
  }
}

} // namespace losses
} // namespace kcc
