//===- Schedules.cpp - Learning-rate schedules as kc IR -------------------===//
//
// Each schedule mirrors its Keras __call__ term by term. Python scalars that
// Keras mixes into float32 tensors become float32 constants here too (JAX's
// weak types), and Keras's `ops.cond`/`ops.where` become a kc.select of both
// branches (both are cheap rank-0 values; the unused one may be NaN and is
// dropped).
//
//===----------------------------------------------------------------------===//

#include "passes/Schedules.h"
#include "passes/KcEmitter.h"

#include <cmath>

using namespace mlir;

namespace kcc {

namespace {
using CD = kc::CompareDirection;

/// The schedule's formulas on rank-0 values of one float type.
class ScheduleEmitter {
public:
  ScheduleEmitter(OpBuilder &b, Location loc, Type floatType)
      : b(b), loc(loc), e(b, loc), ft(floatType) {}

  Value build(const LearningRateSchedule &s, Value iterations);

private:
  Value c(double v) { return e.scalar(ft, v); }
  Value floor(Value x) { return buildFloor(b, loc, x); }
  /// ceil(x) = -floor(-x).
  Value ceil(Value x) { return e.neg(floor(e.neg(x))); }
  Value cos(Value x) { return buildCos(b, loc, x); }
  Value indicator(CD dir, Value l, Value r) {
    return e.cast(e.compare(dir, l, r), ft);
  }

  Value exponential(const LearningRateSchedule &s, Value step);
  Value inverseTime(const LearningRateSchedule &s, Value step);
  Value polynomial(const LearningRateSchedule &s, Value step);
  Value piecewise(const LearningRateSchedule &s, Value iterations);
  Value cosine(const LearningRateSchedule &s, Value step);
  Value cosineRestarts(const LearningRateSchedule &s, Value step);
  /// CosineDecay._decay_function.
  Value cosineDecayed(const LearningRateSchedule &s, Value step,
                      Value decaySteps, Value from);

  OpBuilder &b;
  Location loc;
  KcEmitter e;
  Type ft;
};

Value ScheduleEmitter::build(const LearningRateSchedule &s, Value iterations) {
  // global_step_recomp = cast(step, dtype)
  Value step = e.cast(iterations, ft);
  switch (s.kind) {
  case ScheduleKind::ExponentialDecay:
    return exponential(s, step);
  case ScheduleKind::InverseTimeDecay:
    return inverseTime(s, step);
  case ScheduleKind::PolynomialDecay:
    return polynomial(s, step);
  case ScheduleKind::PiecewiseConstantDecay:
    return piecewise(s, iterations);
  case ScheduleKind::CosineDecay:
    return cosine(s, step);
  case ScheduleKind::CosineDecayRestarts:
    return cosineRestarts(s, step);
  }
  llvm_unreachable("unknown schedule");
}

Value ScheduleEmitter::exponential(const LearningRateSchedule &s, Value step) {
  Value p = e.div(step, c(s.decaySteps));
  if (s.staircase)
    p = floor(p);
  return e.mul(c(s.initialLearningRate), e.pow(c(s.decayRate), p));
}

Value ScheduleEmitter::inverseTime(const LearningRateSchedule &s, Value step) {
  Value p = e.div(step, c(s.decaySteps));
  if (s.staircase)
    p = floor(p);
  Value denom = e.add(c(1.0), e.mul(c(s.decayRate), p));
  return e.div(c(s.initialLearningRate), denom);
}

Value ScheduleEmitter::polynomial(const LearningRateSchedule &s, Value step) {
  Value end = c(s.endLearningRate);
  Value decaySteps = c(s.decaySteps);
  if (s.cycle) {
    // multiplier = where(step == 0, 1, ceil(step / decay_steps))
    Value multiplier = e.select(e.compare(CD::EQ, step, c(0.0)), c(1.0),
                                ceil(e.div(step, decaySteps)));
    decaySteps = e.mul(decaySteps, multiplier);
  } else {
    step = e.min(step, decaySteps);
  }
  Value p = e.div(step, decaySteps);
  return e.add(e.mul(e.sub(c(s.initialLearningRate), end),
                     e.pow(e.sub(c(1.0), p), c(s.power))),
               end);
}

Value ScheduleEmitter::piecewise(const LearningRateSchedule &s,
                                 Value iterations) {
  // Keras compares in the step's integer dtype (float boundaries are cast,
  // truncating) and sums indicator * value, which for sorted boundaries
  // picks exactly one value. f64 holds the integers exactly.
  Type f64 = b.getF64Type();
  Value step = e.cast(iterations, f64);
  auto boundary = [&](size_t i) {
    return e.scalar(f64, std::trunc(s.boundaries[i]));
  };
  Value result = c(0.0);
  result = e.add(
      result, e.mul(indicator(CD::LE, step, boundary(0)), c(s.values.front())));
  result = e.add(
      result, e.mul(indicator(CD::GT, step, boundary(s.boundaries.size() - 1)),
                    c(s.values.back())));
  for (size_t i = 0; i + 1 < s.boundaries.size(); ++i) {
    Value inRange = e.mul(indicator(CD::GT, step, boundary(i)),
                          indicator(CD::LE, step, boundary(i + 1)));
    result = e.add(result, e.mul(inRange, c(s.values[i + 1])));
  }
  return result;
}

Value ScheduleEmitter::cosineDecayed(const LearningRateSchedule &s, Value step,
                                     Value decaySteps, Value from) {
  Value fraction = e.div(step, decaySteps);
  Value cosineDecayed =
      e.mul(c(0.5), e.add(c(1.0), cos(e.mul(c(M_PI), fraction))));
  Value decayed = e.add(e.mul(c(1.0 - s.alpha), cosineDecayed), c(s.alpha));
  return e.mul(from, decayed);
}

Value ScheduleEmitter::cosine(const LearningRateSchedule &s, Value step) {
  Value decaySteps = c(s.decaySteps);
  Value initial = c(s.initialLearningRate);
  if (!s.warmupTarget)
    return cosineDecayed(s, e.min(step, decaySteps), decaySteps, initial);
  Value target = c(*s.warmupTarget);
  Value warmupSteps = c(s.warmupSteps);
  step = e.min(step, e.add(decaySteps, warmupSteps));
  Value warmup =
      e.add(e.mul(e.sub(target, initial), e.div(step, warmupSteps)), initial);
  Value decay = cosineDecayed(s, e.sub(step, warmupSteps), decaySteps, target);
  return e.select(e.compare(CD::LT, step, warmupSteps), warmup, decay);
}

Value ScheduleEmitter::cosineRestarts(const LearningRateSchedule &s,
                                      Value step) {
  Value alpha = c(s.alpha);
  Value tMul = c(s.tMul);
  Value fraction = e.div(step, c(s.decaySteps));
  Value restart;
  // Keras tests `t_mul == 1.0` on the float32 value.
  if (static_cast<float>(s.tMul) == 1.0f) {
    restart = floor(fraction);
    fraction = e.sub(fraction, restart);
  } else {
    Value oneMinusT = e.sub(c(1.0), tMul);
    restart = floor(
        e.div(e.log(e.sub(c(1.0), e.mul(fraction, oneMinusT))), e.log(tMul)));
    Value tPow = e.pow(tMul, restart);
    Value sumR = e.div(e.sub(c(1.0), tPow), oneMinusT);
    fraction = e.div(e.sub(fraction, sumR), tPow);
  }
  Value mFac = e.pow(c(s.mMul), restart);
  Value cosineDecayed =
      e.mul(e.mul(c(0.5), mFac), e.add(c(1.0), cos(e.mul(c(M_PI), fraction))));
  Value decayed = e.add(e.mul(e.sub(c(1.0), alpha), cosineDecayed), alpha);
  return e.mul(c(s.initialLearningRate), decayed);
}

} // namespace

Value buildFloor(OpBuilder &b, Location loc, Value x) {
  KcEmitter e(b, loc);
  Type ft = KcEmitter::typeOf(x).getElementType();
  Value truncated = e.cast(e.cast(x, b.getI64Type()), ft);
  // Truncation rounds negatives up: step those down by one.
  return e.select(e.compare(CD::GT, truncated, x),
                  e.sub(truncated, e.splatLike(x, 1.0)), truncated);
}

Value buildCos(OpBuilder &b, Location loc, Value x) {
  KcEmitter e(b, loc);
  Type ft = KcEmitter::typeOf(x).getElementType();
  Value y = e.add(e.abs(e.cast(x, b.getF64Type())), -M_PI / 2);
  Value y2 = e.mul(y, y);
  // sin(y) = y (1 - y^2/3! (1 - y^2/(4*5) (1 - ...))), Horner from the top.
  Value series = e.splatLike(y2, 1.0);
  for (int k = 7; k >= 1; --k) {
    double divisor = (2.0 * k) * (2.0 * k + 1.0);
    series =
        e.sub(e.splatLike(y2, 1.0), e.mul(e.mul(y2, series), 1.0 / divisor));
  }
  // cos(x) = cos(|x|) = -sin(|x| - pi/2).
  return e.cast(e.neg(e.mul(y, series)), ft);
}

Value buildScheduledLearningRate(OpBuilder &b, Location loc,
                                 const LearningRateSchedule &schedule,
                                 Value iterations, Type floatType) {
  return ScheduleEmitter(b, loc, floatType).build(schedule, iterations);
}

} // namespace kcc
