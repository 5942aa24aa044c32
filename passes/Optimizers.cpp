//===- Optimizers.cpp - Keras optimizers as kc IR -------------------------===//
//
// The formulas mirror keras/src/optimizers/{sgd,adam,rmsprop}.py term by
// term (e.g. Adam's `m += (g - m) * (1 - b1)` rather than the textbook
// `b1 m + (1 - b1) g`) so f32 results round the way Keras's do.
//
//===----------------------------------------------------------------------===//

#include "passes/Optimizers.h"
#include "passes/KcEmitter.h"

using namespace mlir;

namespace kcc {

llvm::SmallVector<std::string> slotNames(const OptimizerConfig &config) {
  switch (config.kind) {
  case OptimizerKind::SGD:
    if (config.momentum != 0.0)
      return {"momentum"};
    return {};
  case OptimizerKind::Adam:
    return {"m", "v"};
  case OptimizerKind::RMSprop:
    if (config.momentum > 0.0)
      return {"velocity", "momentum"};
    return {"velocity"};
  }
  llvm_unreachable("unknown optimizer");
}

StepScalars buildStepScalars(OpBuilder &b, Location loc,
                             const OptimizerConfig &config, Value iterations,
                             Value lr, Type floatType) {
  KcEmitter e(b, loc);
  StepScalars s;
  s.lr = e.cast(lr, floatType);
  if (config.kind != OptimizerKind::Adam)
    return s;
  // local_step = cast(iterations + 1); the powers and the bias correction
  // are rank-0 ops, evaluated once per step for all params.
  Value t = e.add(e.cast(iterations, floatType), 1.0);
  Value b1t = e.pow(e.scalar(floatType, config.beta1), t);
  Value b2t = e.pow(e.scalar(floatType, config.beta2), t);
  Value one = e.scalar(floatType, 1.0);
  s.adamAlpha =
      e.div(e.mul(s.lr, e.sqrt(e.sub(one, b2t))), e.sub(one, b1t));
  return s;
}

ParamUpdate buildUpdate(OpBuilder &b, Location loc,
                        const OptimizerConfig &config,
                        const StepScalars &scalars, Value param, Value grad,
                        ValueRange slots) {
  KcEmitter e(b, loc);
  auto lr = [&] { return e.broadcastLike(scalars.lr, param); };
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
  case OptimizerKind::Adam: {
    Value m = e.add(slots[0], e.mul(e.sub(grad, slots[0]), 1.0 - config.beta1));
    Value v = e.add(slots[1], e.mul(e.sub(e.mul(grad, grad), slots[1]),
                                    1.0 - config.beta2));
    Value alpha = e.broadcastLike(scalars.adamAlpha, param);
    u.param = e.sub(param, e.div(e.mul(m, alpha),
                                 e.add(e.sqrt(v), config.epsilon)));
    u.slots = {m, v};
    return u;
  }
  case OptimizerKind::RMSprop: {
    // Keras 3 divides by sqrt(v + eps), not sqrt(v) + eps.
    Value v = e.add(e.mul(slots[0], config.rho),
                    e.mul(e.mul(grad, grad), 1.0 - config.rho));
    Value increment =
        e.div(e.mul(lr(), grad), e.sqrt(e.add(v, config.epsilon)));
    u.slots.push_back(v);
    if (config.momentum > 0.0) {
      Value mom = e.add(e.mul(slots[1], config.momentum), increment);
      u.slots.push_back(mom);
      increment = mom;
    }
    u.param = e.sub(param, increment);
    return u;
  }
  }
  llvm_unreachable("unknown optimizer");
}

} // namespace kcc
