//===- Regression.cpp - Keras's regression losses
//--------------------------===//
//
// keras/src/losses/losses.py's regression functions, each a mean (or sum)
// over the last axis of an elementwise error: mean_squared_error,
// mean_absolute_error, mean_absolute_percentage_error,
// mean_squared_logarithmic_error, huber, log_cosh and cosine_similarity.
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/losses/LossFunctions.h"

#include <cmath>

using namespace mlir;

namespace kcc {
namespace losses {

namespace {

/// softplus(x) = log(1 + exp(x)) in the stable form jax.nn.softplus
/// computes: max(x, 0) + log(1 + exp(-|x|)).
Value softplus(KcEmitter &e, Value x) {
  return e.add(e.relu(x), e.log(e.add(e.exp(e.neg(e.abs(x))), 1.0)));
}

/// keras.ops.normalize's L2 form: x * rsqrt(max(sum(x^2), eps^2)) along
/// `axis`.
Value l2Normalize(KcEmitter &e, Value x, int64_t axis) {
  Value squares = e.sumAxis(e.mul(x, x), axis, /*keepdims=*/true);
  Value floor = e.splatLike(squares, kKerasEpsilon * kKerasEpsilon);
  return e.mul(x, e.broadcastLike(e.rsqrt(e.max(squares, floor)), x));
}

/// Huber's elementwise value: 0.5 err^2 where |err| <= delta, else
/// delta |err| - 0.5 delta^2.
Value huber(KcEmitter &e, Value err, double delta) {
  Value a = e.abs(err);
  Value quadratic = e.mul(e.mul(err, err), 0.5);
  Value linear = e.add(e.mul(a, delta), -0.5 * delta * delta);
  Value small = e.compare(kc::CompareDirection::LE, a, e.splatLike(a, delta));
  return e.select(small, quadratic, linear);
}

} // namespace

Value regression(KcEmitter &e, const LossConfig &loss, Value pred,
                 Value target) {
  switch (loss.kind) {
  case LossKind::MeanSquaredError: {
    Value d = e.sub(target, pred);
    return e.meanAxis(e.mul(d, d), -1, false);
  }
  case LossKind::MeanAbsoluteError:
    return e.meanAxis(e.abs(e.sub(target, pred)), -1, false);
  case LossKind::MeanAbsolutePercentageError: {
    Value denom = e.max(e.abs(target), e.splatLike(target, kKerasEpsilon));
    Value diff = e.abs(e.div(e.sub(target, pred), denom));
    return e.mul(e.meanAxis(diff, -1, false), 100.0);
  }
  case LossKind::MeanSquaredLogarithmicError: {
    auto logOf = [&](Value x) {
      return e.log(e.add(e.max(x, e.splatLike(x, kKerasEpsilon)), 1.0));
    };
    Value d = e.sub(logOf(pred), logOf(target));
    return e.meanAxis(e.mul(d, d), -1, false);
  }
  case LossKind::Huber:
    return e.meanAxis(huber(e, e.sub(pred, target), loss.delta), -1, false);
  case LossKind::LogCosh: {
    // log(cosh(x)) = x + softplus(-2x) - log(2), stable for large |x|.
    Value x = e.sub(pred, target);
    Value v = e.add(e.add(x, softplus(e, e.mul(x, -2.0))), -std::log(2.0));
    return e.meanAxis(v, -1, false);
  }
  case LossKind::CosineSimilarity: {
    int64_t axis =
        normalizeAxis(*loss.resolvedAxis(), KcEmitter::typeOf(pred).getRank());
    Value products =
        e.mul(l2Normalize(e, target, axis), l2Normalize(e, pred, axis));
    return e.neg(e.sumAxis(products, axis, false));
  }
  default:
    llvm_unreachable("not a regression loss");
  }
}

} // namespace losses
} // namespace kcc
