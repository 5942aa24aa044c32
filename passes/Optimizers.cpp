//===- Optimizers.cpp - Keras optimizers as kc IR -------------------------===//
//
// The formulas mirror keras/src/optimizers/*.py term by term (e.g. Adam's
// `m += (g - m) * (1 - b1)` rather than the textbook `b1 m + (1 - b1) g`) so
// f32 results round the way Keras's do. Where Keras subtracts a python float
// (`1 - self.beta_1`) the constant is computed in double; where it first
// casts beta to the variable's dtype (Nadam, Lion) the subtraction is the
// float32 one (see oneMinus).
//
//===----------------------------------------------------------------------===//

#include "passes/Optimizers.h"
#include "passes/KcEmitter.h"
#include "passes/Schedules.h"

using namespace mlir;

namespace kcc {

namespace {

/// `v` as the float type `ft` holds it (f32 rounding; wider types keep it).
double roundTo(Type ft, double v) {
  return ft.isF32() ? static_cast<double>(static_cast<float>(v)) : v;
}

/// `1 - cast(beta, ft)` computed in `ft`: the difference of two f32 values
/// is exact in double, so rounding it once gives the f32 subtraction.
double oneMinus(Type ft, double beta) { return 1.0 - roundTo(ft, beta); }

/// sign(x) as jnp.sign: 1, -1, or x itself for 0 (and NaN).
Value sign(KcEmitter &e, Value x) {
  Value zero = e.splatLike(x, 0.0);
  return e.select(e.compare(kc::CompareDirection::GT, x, zero),
                  e.splatLike(x, 1.0),
                  e.select(e.compare(kc::CompareDirection::LT, x, zero),
                           e.splatLike(x, -1.0), x));
}

} // namespace

StepScalars buildStepScalars(OpBuilder &b, Location loc,
                             const OptimizerConfig &config, Value iterations,
                             Value lr, Type floatType, ValueRange globalState) {
  KcEmitter e(b, loc);
  StepScalars s;
  s.lr = config.schedule ? buildScheduledLearningRate(b, loc, *config.schedule,
                                                      iterations, floatType)
                         : e.cast(lr, floatType);
  // local_step = cast(iterations + 1); the powers and the bias corrections
  // are rank-0 ops, evaluated once per step for all params.
  auto c = [&](double v) { return e.scalar(floatType, v); };
  Value t = e.add(e.cast(iterations, floatType), 1.0);
  switch (config.kind) {
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW: {
    Value b1t = e.pow(c(config.beta1), t);
    Value b2t = e.pow(c(config.resolvedBeta2()), t);
    s.adamAlpha =
        e.div(e.mul(s.lr, e.sqrt(e.sub(c(1.0), b2t))), e.sub(c(1.0), b1t));
    break;
  }
  case OptimizerKind::Adamax:
    s.beta1Power = e.pow(c(config.beta1), t);
    break;
  case OptimizerKind::Nadam: {
    assert(globalState.size() == 1 && "nadam carries u_product");
    // _backend_update_step first advances u_product (with python floats
    // beta_1 and 0.96), then every update_step reads it.
    auto factor = [&](Value step) {
      return e.sub(c(1.0), e.mul(c(0.5), e.pow(c(0.96), step)));
    };
    Value b1 = c(config.beta1);
    s.uProduct = e.mul(e.mul(globalState[0], b1), factor(t));
    s.globalState.push_back(s.uProduct);
    s.uT = e.mul(b1, factor(t));
    s.uT1 = e.mul(b1, factor(e.add(t, 1.0)));
    s.uProduct1 = e.mul(s.uProduct, s.uT1);
    s.beta2Power = e.pow(c(config.resolvedBeta2()), t);
    break;
  }
  default:
    break;
  }
  return s;
}

llvm::SmallVector<Value> buildClippedGradients(OpBuilder &b, Location loc,
                                               const OptimizerConfig &config,
                                               ValueRange grads) {
  KcEmitter e(b, loc);
  llvm::SmallVector<Value> out(grads.begin(), grads.end());
  if (config.clipnorm > 0) {
    // _clip_by_norm: g * c / max(||g||, c), per gradient.
    for (Value &g : out) {
      Type ft = KcEmitter::typeOf(g).getElementType();
      Value norm = e.sqrt(e.sumAll(e.mul(g, g)));
      Value denom = e.max(norm, e.scalar(ft, config.clipnorm));
      g = e.div(e.mul(g, config.clipnorm), e.broadcastLike(denom, g));
    }
  } else if (config.globalClipnorm > 0 && !out.empty()) {
    // clip_by_global_norm: scale = c * min(1 / norm, 1 / c), plus
    // (norm - norm) so a non-finite norm makes it NaN, as Keras's does.
    Type ft = KcEmitter::typeOf(out[0]).getElementType();
    Value squared;
    for (Value g : out) {
      Value s = e.sumAll(e.mul(g, g));
      squared = squared ? e.add(squared, s) : s;
    }
    Value norm = e.sqrt(squared);
    Value one = e.scalar(ft, 1.0);
    Value clip = e.scalar(ft, config.globalClipnorm);
    Value scale = e.mul(clip, e.min(e.div(one, norm), e.div(one, clip)));
    scale = e.add(scale, e.sub(norm, norm));
    for (Value &g : out)
      g = e.mul(g, e.broadcastLike(scale, g));
  } else if (config.clipvalue > 0) {
    for (Value &g : out)
      g = e.min(e.max(g, e.splatLike(g, -config.clipvalue)),
                e.splatLike(g, config.clipvalue));
  }
  return out;
}

ParamUpdate buildUpdate(OpBuilder &b, Location loc,
                        const OptimizerConfig &config,
                        const StepScalars &scalars, Value param, Value grad,
                        ValueRange slots) {
  KcEmitter e(b, loc);
  Type ft = KcEmitter::typeOf(param).getElementType();
  auto lr = [&] { return e.broadcastLike(scalars.lr, param); };
  auto bcast = [&](Value scalar) { return e.broadcastLike(scalar, param); };
  // _apply_weight_decay: variable - variable * wd * lr, before update_step.
  if (double wd = config.resolvedWeightDecay(); wd > 0)
    param = e.sub(param, e.mul(e.mul(param, wd), lr()));

  ParamUpdate u;
  switch (config.kind) {
  case OptimizerKind::SGD: {
    if (config.momentum == 0.0) {
      u.param = e.sub(param, e.mul(grad, lr()));
      return u;
    }
    // m = m * mu - g * lr; w += m (or, Nesterov, w += m * mu - g * lr).
    Value glr = e.mul(grad, lr());
    Value m = e.sub(e.mul(slots[0], config.momentum), glr);
    u.param = config.nesterov
                  ? e.add(param, e.sub(e.mul(m, config.momentum), glr))
                  : e.add(param, m);
    u.slots.push_back(m);
    return u;
  }
  case OptimizerKind::Adam:
  case OptimizerKind::AdamW: {
    Value m = e.add(slots[0], e.mul(e.sub(grad, slots[0]), 1.0 - config.beta1));
    Value v = e.add(slots[1], e.mul(e.sub(e.mul(grad, grad), slots[1]),
                                    1.0 - config.resolvedBeta2()));
    u.slots = {m, v};
    if (config.amsgrad) {
      // The update divides by the running maximum of v, kept as v_hat.
      v = e.max(slots[2], v);
      u.slots.push_back(v);
    }
    u.param = e.sub(param, e.div(e.mul(m, bcast(scalars.adamAlpha)),
                                 e.add(e.sqrt(v), config.epsilon)));
    return u;
  }
  case OptimizerKind::RMSprop: {
    // Keras 3 divides by sqrt(v + eps), not sqrt(v) + eps.
    Value v = e.add(e.mul(slots[0], config.rho),
                    e.mul(e.mul(grad, grad), 1.0 - config.rho));
    Value denominator = e.add(v, config.epsilon);
    Value average;
    if (config.centered) {
      // The variance: v - avg(g)^2 + eps, in Keras's order.
      unsigned a = config.momentum > 0.0 ? 2 : 1;
      average =
          e.add(e.mul(slots[a], config.rho), e.mul(grad, 1.0 - config.rho));
      denominator = e.add(e.sub(v, e.mul(average, average)), config.epsilon);
    }
    Value increment = e.div(e.mul(lr(), grad), e.sqrt(denominator));
    u.slots.push_back(v);
    if (config.momentum > 0.0) {
      Value mom = e.add(e.mul(slots[1], config.momentum), increment);
      u.slots.push_back(mom);
      increment = mom;
    }
    if (average)
      u.slots.push_back(average);
    u.param = e.sub(param, increment);
    return u;
  }
  case OptimizerKind::Adagrad: {
    Value acc = e.add(slots[0], e.mul(grad, grad));
    u.param = e.sub(
        param, e.div(e.mul(lr(), grad), e.sqrt(e.add(acc, config.epsilon))));
    u.slots = {acc};
    return u;
  }
  case OptimizerKind::Nadam: {
    double b1 = oneMinus(ft, config.beta1);
    double b2 = oneMinus(ft, config.resolvedBeta2());
    Value m = e.add(slots[0], e.mul(e.sub(grad, slots[0]), b1));
    Value v = e.add(slots[1], e.mul(e.sub(e.mul(grad, grad), slots[1]), b2));
    Value one = e.scalar(ft, 1.0);
    Value mHat = e.add(e.div(e.mul(bcast(scalars.uT1), m),
                             bcast(e.sub(one, scalars.uProduct1))),
                       e.div(e.mul(bcast(e.sub(one, scalars.uT)), grad),
                             bcast(e.sub(one, scalars.uProduct))));
    Value vHat = e.div(v, bcast(e.sub(one, scalars.beta2Power)));
    u.param = e.sub(
        param, e.div(e.mul(mHat, lr()), e.add(e.sqrt(vHat), config.epsilon)));
    u.slots = {m, v};
    return u;
  }
  case OptimizerKind::Adamax: {
    Value m = e.add(slots[0], e.mul(e.sub(grad, slots[0]), 1.0 - config.beta1));
    Value norm = e.max(e.mul(slots[1], config.resolvedBeta2()), e.abs(grad));
    Value one = e.scalar(ft, 1.0);
    Value denom = e.mul(bcast(e.sub(one, scalars.beta1Power)),
                        e.add(norm, config.epsilon));
    u.param = e.sub(param, e.div(e.mul(lr(), m), denom));
    u.slots = {m, norm};
    return u;
  }
  case OptimizerKind::Lion: {
    double b1 = roundTo(ft, config.beta1),
           b2 = roundTo(ft, config.resolvedBeta2());
    Value direction = e.add(e.mul(slots[0], b1), e.mul(grad, oneMinus(ft, b1)));
    u.param = e.sub(param, e.mul(lr(), sign(e, direction)));
    u.slots = {e.add(e.mul(slots[0], b2), e.mul(grad, oneMinus(ft, b2)))};
    return u;
  }
  }
  llvm_unreachable("unknown optimizer");
}

} // namespace kcc
