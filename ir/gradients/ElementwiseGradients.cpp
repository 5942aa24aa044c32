//===- ElementwiseGradients.cpp - Gradient rules of elementwise kc ops ----===//
//
// Vector-Jacobian products of the elementwise ops. Operands and results share
// one shape (broadcasting is explicit), so every rule is elementwise too and
// fuses with its forward neighbours. Rules reuse the forward result where the
// derivative is cheapest in terms of it (exp, sqrt, sigmoid, tanh, div).
// Kinks follow TensorFlow: max/min send a tie to the lhs, relu and abs have
// zero gradient at 0.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

#include <cmath>

using namespace mlir;
using namespace kcc::kc;

using Grads = llvm::SmallVector<Value>;

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

Grads AddOp::buildGradients(OpBuilder &builder, Value g) { return {g, g}; }

Grads SubOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {g, gb.neg(g)};
}

Grads MulOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {gb.mul(g, getRhs()), gb.mul(g, getLhs())};
}

Grads DivOp::buildGradients(OpBuilder &builder, Value g) {
  // z = x / y: dz/dx = 1 / y, dz/dy = -x / y^2 = -z / y.
  GradientBuilder gb(builder, *this);
  Value dx = gb.div(g, getRhs());
  Value dy = gb.neg(gb.div(gb.mul(g, getResult()), getRhs()));
  return {dx, dy};
}

Grads PowOp::buildGradients(OpBuilder &builder, Value g) {
  // z = x^y: dz/dx = y x^(y-1); dz/dy = z log(x), taken as 0 where x <= 0
  // (TF's rule: there z is 0 or the power is only defined for integer y).
  GradientBuilder gb(builder, *this);
  Value x = getLhs(), y = getRhs();
  Value dx = gb.mul(g, gb.mul(y, gb.pow(x, gb.sub(y, gb.like(y, 1.0)))));
  Value positive = gb.compare(CompareDirection::GT, x, gb.zerosLike(x));
  Value logX = gb.selectOrZero(positive, gb.log(x));
  Value dy = gb.mul(g, gb.mul(getResult(), logX));
  return {dx, dy};
}

namespace {
/// max/min: the lhs wins where `lhsWins` (ties included), as in TF.
Grads routeByMask(GradientBuilder &gb, Value lhsWins, Value g) {
  Value zero = gb.zerosLike(g);
  return {gb.select(lhsWins, g, zero), gb.select(lhsWins, zero, g)};
}
} // namespace

Grads MaxOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return routeByMask(gb, gb.compare(CompareDirection::GE, getLhs(), getRhs()),
                     g);
}

Grads MinOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return routeByMask(gb, gb.compare(CompareDirection::LE, getLhs(), getRhs()),
                     g);
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

Grads NegOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {gb.neg(g)};
}

Grads ExpOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {gb.mul(g, getResult())};
}

Grads LogOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {gb.div(g, getX())};
}

Grads SqrtOp::buildGradients(OpBuilder &builder, Value g) {
  // d sqrt(x) = 1 / (2 sqrt(x)).
  GradientBuilder gb(builder, *this);
  return {gb.scale(gb.div(g, getResult()), 0.5)};
}

Grads RsqrtOp::buildGradients(OpBuilder &builder, Value g) {
  // y = x^(-1/2): dy/dx = -y^3 / 2.
  GradientBuilder gb(builder, *this);
  Value y = getResult();
  return {gb.mul(g, gb.scale(gb.mul(y, gb.mul(y, y)), -0.5))};
}

Grads AbsOp::buildGradients(OpBuilder &builder, Value g) {
  // g * sign(x), sign(0) = 0.
  GradientBuilder gb(builder, *this);
  Value x = getX(), zero = gb.zerosLike(x);
  Value positive = gb.compare(CompareDirection::GT, x, zero);
  Value negative = gb.compare(CompareDirection::LT, x, zero);
  return {gb.select(positive, g, gb.selectOrZero(negative, gb.neg(g)))};
}

Grads ReluOp::buildGradients(OpBuilder &builder, Value g) {
  // relu(x) > 0 exactly where x > 0, so the mask reads the result: the
  // pre-activation is then dead after the forward pass (never kept for
  // backprop), and a GEMM or convolution can produce relu(x) directly.
  GradientBuilder gb(builder, *this);
  Value y = getResult();
  return {
      gb.selectOrZero(gb.compare(CompareDirection::GT, y, gb.zerosLike(y)), g)};
}

Grads SigmoidOp::buildGradients(OpBuilder &builder, Value g) {
  // y (1 - y).
  GradientBuilder gb(builder, *this);
  Value y = getResult();
  return {gb.mul(g, gb.mul(y, gb.sub(gb.like(y, 1.0), y)))};
}

Grads TanhOp::buildGradients(OpBuilder &builder, Value g) {
  // 1 - y^2.
  GradientBuilder gb(builder, *this);
  Value y = getResult();
  return {gb.mul(g, gb.sub(gb.like(y, 1.0), gb.mul(y, y)))};
}

Grads GeluOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  Value x = getX();
  const double invSqrt2Pi = 1.0 / std::sqrt(2.0 * M_PI);
  if (getApproximate()) {
    // y = x/2 (1 + t), t = tanh(k (x + a x^3)):
    // dy/dx = (1 + t)/2 + x/2 (1 - t^2) k (1 + 3 a x^2).
    const double k = std::sqrt(2.0 / M_PI), a = 0.044715;
    Value x2 = gb.mul(x, x);
    Value t = gb.tanh(gb.scale(gb.add(x, gb.scale(gb.mul(x2, x), a)), k));
    Value one = gb.like(x, 1.0);
    Value half1pT = gb.scale(gb.add(one, t), 0.5);
    Value dInner = gb.scale(gb.add(one, gb.scale(x2, 3.0 * a)), k);
    Value sech2 = gb.sub(one, gb.mul(t, t));
    Value dydx =
        gb.add(half1pT, gb.mul(gb.scale(x, 0.5), gb.mul(sech2, dInner)));
    return {gb.mul(g, dydx)};
  }
  // y = x Phi(x): dy/dx = Phi(x) + x phi(x). kc has no erf, so Phi comes
  // from the forward result, Phi = y / x, with its Taylor series
  // 1/2 + (x - x^3/6) / sqrt(2 pi) (error < 1e-17) where |x| is too small to
  // divide by (the divisor there is replaced by 1 to keep NaNs out).
  const double tiny = 1e-3;
  Value one = gb.like(x, 1.0);
  Value x2 = gb.mul(x, x);
  Value large = gb.compare(CompareDirection::GT, gb.abs(x), gb.like(x, tiny));
  Value phiByDivision = gb.div(getResult(), gb.select(large, x, one));
  Value phiBySeries = gb.add(
      gb.like(x, 0.5),
      gb.scale(gb.mul(x, gb.sub(one, gb.scale(x2, 1.0 / 6.0))), invSqrt2Pi));
  Value cdf = gb.select(large, phiByDivision, phiBySeries);
  Value pdf = gb.scale(gb.exp(gb.scale(x2, -0.5)), invSqrt2Pi);
  return {gb.mul(g, gb.add(cdf, gb.mul(x, pdf)))};
}

//===----------------------------------------------------------------------===//
// Select and cast
//===----------------------------------------------------------------------===//

Grads SelectOp::buildGradients(OpBuilder &builder, Value g) {
  if (!GradientBuilder::isFloat(getResult()))
    return {Value(), Value(), Value()};
  GradientBuilder gb(builder, *this);
  Value zero = gb.zerosLike(g);
  return {Value(), gb.select(getCond(), g, zero),
          gb.select(getCond(), zero, g)};
}

Grads CastOp::buildGradients(OpBuilder &builder, Value g) {
  // Only float -> float casts carry a gradient: it is cast back.
  if (!GradientBuilder::isFloat(getX()) ||
      !GradientBuilder::isFloat(getResult()))
    return {Value()};
  GradientBuilder gb(builder, *this);
  return {gb.cast(g, GradientBuilder::typeOf(getX()).getElementType())};
}
