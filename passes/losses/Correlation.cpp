//===- Correlation.cpp - Pearson and concordance correlations -------------===//
//
// keras/src/metrics/correlation_metrics.py's functions: one value per
// example along the last axis, which the metric averages. As Keras, with
// population variances and no epsilon in Pearson's (a constant row gives
// 0/0, NaN, there as here).
//
//===----------------------------------------------------------------------===//

#include "passes/Losses.h"
#include "passes/losses/LossFunctions.h"

using namespace mlir;

namespace kcc {
namespace losses {

namespace {

Value meanKeep(KcEmitter &e, Value x) {
  return e.broadcastLike(e.meanAxis(x, -1, /*keepdims=*/true), x);
}

/// ops.var along the last axis, kept: mean((x - mean(x))^2).
Value varianceKeep(KcEmitter &e, Value x) {
  Value d = e.sub(x, meanKeep(e, x));
  return meanKeep(e, e.mul(d, d));
}

} // namespace

Value pearsonCorrelation(KcEmitter &e, Value pred, Value target) {
  Value t = e.sub(target, meanKeep(e, target));
  Value p = e.sub(pred, meanKeep(e, pred));
  t = e.div(t, e.sqrt(varianceKeep(e, t)));
  p = e.div(p, e.sqrt(varianceKeep(e, p)));
  return e.meanAxis(e.mul(t, p), -1, /*keepdims=*/false);
}

Value concordanceCorrelation(KcEmitter &e, Value pred, Value target) {
  Value tMean = meanKeep(e, target);
  Value pMean = meanKeep(e, pred);
  Value tVar = varianceKeep(e, e.sub(target, tMean));
  Value pVar = varianceKeep(e, e.sub(pred, pMean));
  // Keras centres the target on the prediction's mean here.
  Value covar = e.mul(e.sub(target, pMean), e.sub(pred, pMean));
  Value meanGap = e.sub(tMean, pMean);
  Value norm = e.add(e.add(tVar, pVar), e.mul(meanGap, meanGap));
  Value ratio = e.div(e.mul(covar, 2.0), e.add(norm, kKerasEpsilon));
  return e.meanAxis(ratio, -1, /*keepdims=*/false);
}

} // namespace losses
} // namespace kcc
