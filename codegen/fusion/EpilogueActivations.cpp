//===- EpilogueActivations.cpp - Activations a GEMM epilogue applies ----===//
//
// Matchers of the scalar bodies kc-lower-to-linalg and kc-fuse-elementwise
// leave for Keras's activations (see EpilogueActivations.h), and their
// names for the fusion remarks, and of the gradients of relu, tanh and
// sigmoid. kc-fuse-epilogues (FuseEpilogues.cpp) uses them to recognise the
// activation a GEMM/conv epilogue applies, and the activation gradient an
// average pooling's gradient applies.
//
//===----------------------------------------------------------------------===//

#include "codegen/fusion/EpilogueActivations.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/OperationSupport.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;

namespace kcc {
namespace codegen {

using Activation = EpilogueActivation;

namespace {

bool isZero(Value v) { return matchPattern(v, m_AnyZeroFloat()); }

bool isOne(Value v) { return matchPattern(v, m_OneFloat()); }

/// Whether `a` and `b` are one value, or computed by two identical ops of
/// operands that are (fusion inlines a shared producer once per consumer).
bool sameValue(Value a, Value b, unsigned depth = 0) {
  if (a == b)
    return true;
  auto x = dyn_cast<OpResult>(a), y = dyn_cast<OpResult>(b);
  if (!x || !y || x.getResultNumber() != y.getResultNumber() || depth > 8)
    return false;
  return OperationEquivalence::isEquivalentTo(
      x.getOwner(), y.getOwner(),
      [&](Value l, Value r) { return success(sameValue(l, r, depth + 1)); },
      nullptr, OperationEquivalence::IgnoreLocations);
}

bool isCommutedPair(Value a, Value b, Value x, Value y) {
  return (a == x && b == y) || (a == y && b == x);
}

/// Whether `v` is the float constant `c` (to float precision).
bool isConstant(Value v, double c) {
  FloatAttr attr;
  return matchPattern(v, m_Constant(&attr)) &&
         std::abs(attr.getValueAsDouble() - c) <= 1e-7 * std::abs(c);
}

/// Whether `v` is the float constant `c` rounded to its type, exactly.
bool isExactly(Value v, double c) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return false;
  APFloat want(c);
  bool losesInfo;
  want.convert(attr.getValue().getSemantics(), APFloat::rmNearestTiesToEven,
               &losesInfo);
  return attr.getValue().bitwiseIsEqual(want);
}

/// The value of the float constant `v`, if it is one.
std::optional<double> constantValue(Value v) {
  FloatAttr attr;
  if (!matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  return attr.getValueAsDouble();
}

/// The operand of the binary op `op` other than the one `pred` accepts
/// (either order), or null.
template <typename OpTy, typename Pred> Value otherOperand(Value v, Pred pred) {
  auto op = v.getDefiningOp<OpTy>();
  if (!op)
    return {};
  if (pred(op.getLhs()))
    return op.getRhs();
  if (pred(op.getRhs()))
    return op.getLhs();
  return {};
}

/// gelu(x) as kc-lower-to-linalg writes it: (0.5 * x) * (1 + inner), inner
/// erf(x * 1/sqrt(2)) or, approximated, tanh(sqrt(2/pi) * (x + 0.044715 *
/// x * x * x)). The value gelu is applied to, or null; `approximate` says
/// which form matched.
Value matchGelu(Value v, bool &approximate) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return {};
  for (auto [half, rest] : {std::pair(mul.getLhs(), mul.getRhs()),
                            std::pair(mul.getRhs(), mul.getLhs())}) {
    Value x = otherOperand<arith::MulFOp>(
        half, [](Value c) { return isConstant(c, 0.5); });
    Value inner =
        otherOperand<arith::AddFOp>(rest, [](Value c) { return isOne(c); });
    if (!x || !inner)
      continue;
    if (auto erf = inner.getDefiningOp<math::ErfOp>()) {
      Value y = otherOperand<arith::MulFOp>(erf.getOperand(), [](Value c) {
        return isConstant(c, 0.70710678118654752440);
      });
      if (y == x) {
        approximate = false;
        return x;
      }
    }
    if (auto tanh = inner.getDefiningOp<math::TanhOp>()) {
      // sqrt(2/pi) * (x + ((0.044715 * x) * x) * x)
      Value sum = otherOperand<arith::MulFOp>(tanh.getOperand(), [](Value c) {
        return isConstant(c, 0.79788456080286535588);
      });
      Value cube =
          otherOperand<arith::AddFOp>(sum, [&](Value y) { return y == x; });
      auto isX = [&](Value y) { return y == x; };
      Value square = otherOperand<arith::MulFOp>(cube, isX);
      Value scaled = otherOperand<arith::MulFOp>(square, isX);
      if (scaled && otherOperand<arith::MulFOp>(scaled, [](Value c) {
                      return isConstant(c, 0.044715);
                    }) == x) {
        approximate = true;
        return x;
      }
    }
  }
  return {};
}

/// `v` as select(x >= 0, a, b): the select, with `x` set, or null.
arith::SelectOp matchSelectOnSign(Value v, Value &x) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGE ||
      !isZero(cmp.getRhs()))
    return {};
  x = cmp.getLhs();
  return select;
}

/// sigmoid(x) as kc-lower-to-linalg writes it:
/// e = exp(-|x|); s = 1 / (1 + e); x >= 0 ? s : e * s. The value sigmoid is
/// applied to, or null.
Value matchSigmoid(Value v) {
  Value x;
  arith::SelectOp select = matchSelectOnSign(v, x);
  if (!select)
    return {};
  auto div = select.getTrueValue().getDefiningOp<arith::DivFOp>();
  auto mul = select.getFalseValue().getDefiningOp<arith::MulFOp>();
  if (!div || !mul || !isOne(div.getLhs()))
    return {};
  auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!add)
    return {};
  Value e = isOne(add.getLhs())   ? add.getRhs()
            : isOne(add.getRhs()) ? add.getLhs()
                                  : Value();
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : math::ExpOp();
  auto neg =
      exp ? exp.getOperand().getDefiningOp<arith::NegFOp>() : arith::NegFOp();
  auto abs =
      neg ? neg.getOperand().getDefiningOp<math::AbsFOp>() : math::AbsFOp();
  if (!abs || abs.getOperand() != x ||
      !isCommutedPair(mul.getLhs(), mul.getRhs(), e, div.getResult()))
    return {};
  return x;
}

/// relu(x) as kc-lower-to-linalg writes it, or maximumf(x, 0): the value
/// relu is applied to, or null.
Value matchRelu(Value v) {
  if (auto max = v.getDefiningOp<arith::MaximumFOp>()) {
    if (isZero(max.getRhs()))
      return max.getLhs();
    if (isZero(max.getLhs()))
      return max.getRhs();
    return {};
  }
  auto select = v.getDefiningOp<arith::SelectOp>();
  if (!select)
    return {};
  auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
  if (!cmp)
    return {};
  Value x = cmp.getLhs();
  // select(x < 0, 0, x)
  if (cmp.getPredicate() == arith::CmpFPredicate::OLT && isZero(cmp.getRhs()) &&
      isZero(select.getTrueValue()) && select.getFalseValue() == x)
    return x;
  // select(x > 0, x, 0)
  if (cmp.getPredicate() == arith::CmpFPredicate::OGT && isZero(cmp.getRhs()) &&
      select.getTrueValue() == x && isZero(select.getFalseValue()))
    return x;
  return {};
}

/// kc-lower-to-linalg's max (`isMax`) or min of x and y, which propagates
/// NaN from x: `x > y || x != x ? x : y` (min: `<`), or arith's
/// maximumf/minimumf (NaN from either side; y must then be a constant, for
/// which the two agree). x, with y in `other`, or null.
Value matchMinMax(Value v, bool isMax, Value &other) {
  if (isMax ? isa_and_present<arith::MaximumFOp>(v.getDefiningOp())
            : isa_and_present<arith::MinimumFOp>(v.getDefiningOp())) {
    Operation *op = v.getDefiningOp();
    Value l = op->getOperand(0), r = op->getOperand(1);
    if (constantValue(l))
      std::swap(l, r);
    if (!constantValue(r))
      return {};
    other = r;
    return l;
  }
  auto select = v.getDefiningOp<arith::SelectOp>();
  auto orOp = select ? select.getCondition().getDefiningOp<arith::OrIOp>()
                     : arith::OrIOp();
  if (!orOp)
    return {};
  Value x = select.getTrueValue(), y = select.getFalseValue();
  auto isOrder = [&](Value c) {
    auto cmp = c.getDefiningOp<arith::CmpFOp>();
    return cmp &&
           cmp.getPredicate() == (isMax ? arith::CmpFPredicate::OGT
                                        : arith::CmpFPredicate::OLT) &&
           sameValue(cmp.getLhs(), x) && sameValue(cmp.getRhs(), y);
  };
  auto isNaN = [&](Value c) {
    auto cmp = c.getDefiningOp<arith::CmpFOp>();
    return cmp &&
           (cmp.getPredicate() == arith::CmpFPredicate::UNE ||
            cmp.getPredicate() == arith::CmpFPredicate::UNO) &&
           sameValue(cmp.getLhs(), x) && sameValue(cmp.getRhs(), x);
  };
  if (!(isOrder(orOp.getLhs()) && isNaN(orOp.getRhs())) &&
      !(isNaN(orOp.getLhs()) && isOrder(orOp.getRhs())))
    return {};
  other = y;
  return x;
}

/// max(x, 0): x, or null.
Value matchMaxZero(Value v) {
  Value zero;
  Value x = matchMinMax(v, /*isMax=*/true, zero);
  return x && isZero(zero) ? x : Value();
}

/// elu as frontend/ops/Activations.cpp composes it:
/// select(x > 0, x, [alpha *] (exp(min(x, 0)) - 1)). x, with alpha in
/// `alpha` and its constant in `alphaConst` (null when there is no
/// multiply: alpha 1), or null.
Value matchElu(Value v, double &alpha, Value &alphaConst) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGT ||
      !isZero(cmp.getRhs()))
    return {};
  Value x = cmp.getLhs();
  if (!sameValue(select.getTrueValue(), x))
    return {};
  Value negative = select.getFalseValue();
  alpha = 1;
  alphaConst = {};
  if (auto mul = negative.getDefiningOp<arith::MulFOp>()) {
    Value c = mul.getLhs(), rest = mul.getRhs();
    if (!constantValue(c))
      std::swap(c, rest);
    std::optional<double> a = constantValue(c);
    if (!a)
      return {};
    alpha = *a;
    alphaConst = c;
    negative = rest;
  }
  auto sub = negative.getDefiningOp<arith::SubFOp>();
  auto exp = sub ? sub.getLhs().getDefiningOp<math::ExpOp>() : math::ExpOp();
  if (!exp || !isExactly(sub.getRhs(), 1.0))
    return {};
  Value zero;
  Value y = matchMinMax(exp.getOperand(), /*isMax=*/false, zero);
  if (!y || !isZero(zero) || !sameValue(y, x))
    return {};
  return x;
}

/// selu: scale * elu(x, alpha) with jax.nn.selu's constants. x, or null.
Value matchSelu(Value v) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return {};
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  for (auto [scale, rest] : {std::pair(mul.getLhs(), mul.getRhs()),
                             std::pair(mul.getRhs(), mul.getLhs())}) {
    double alpha;
    Value alphaConst;
    if (!isExactly(scale, kScale))
      continue;
    if (Value x = matchElu(rest, alpha, alphaConst);
        x && alphaConst && isExactly(alphaConst, kAlpha))
      return x;
  }
  return {};
}

/// leaky_relu: select(x >= 0, x, slope * x). x, with the slope, or null.
Value matchLeakyRelu(Value v, double &slope) {
  Value x;
  arith::SelectOp select = matchSelectOnSign(v, x);
  if (!select)
    return {};
  auto mul = select.getFalseValue().getDefiningOp<arith::MulFOp>();
  if (!mul || !sameValue(select.getTrueValue(), x))
    return {};
  for (auto [c, y] : {std::pair(mul.getLhs(), mul.getRhs()),
                      std::pair(mul.getRhs(), mul.getLhs())})
    if (std::optional<double> s = constantValue(c); s && sameValue(y, x)) {
      slope = *s;
      return x;
    }
  return {};
}

/// relu6 and ReLU(max_value): min(relu(x), m), or min(max(relu(x), 0), m)
/// as keras.activations.relu clips for a maximum other than 6. x, with m,
/// or null.
Value matchBoundedRelu(Value v, double &maximum) {
  Value m;
  Value r = matchMinMax(v, /*isMax=*/false, m);
  std::optional<double> max = r ? constantValue(m) : std::nullopt;
  if (!max)
    return {};
  Value x = matchRelu(r);
  if (Value inner = x ? Value() : matchMaxZero(r))
    x = matchRelu(inner);
  if (x)
    maximum = *max;
  return x;
}

/// softplus: max(x, 0) + log(1 + exp(-|x|)). x, or null.
Value matchSoftplus(Value v) {
  auto add = v.getDefiningOp<arith::AddFOp>();
  if (!add)
    return {};
  for (auto [max, tail] : {std::pair(add.getLhs(), add.getRhs()),
                           std::pair(add.getRhs(), add.getLhs())}) {
    Value x = matchMaxZero(max);
    auto log = tail.getDefiningOp<math::LogOp>();
    if (!x || !log)
      continue;
    Value e = otherOperand<arith::AddFOp>(
        log.getOperand(), [](Value c) { return isExactly(c, 1.0); });
    auto exp = e ? e.getDefiningOp<math::ExpOp>() : math::ExpOp();
    auto neg =
        exp ? exp.getOperand().getDefiningOp<arith::NegFOp>() : arith::NegFOp();
    auto abs =
        neg ? neg.getOperand().getDefiningOp<math::AbsFOp>() : math::AbsFOp();
    if (abs && sameValue(abs.getOperand(), x))
      return x;
  }
  return {};
}

/// hard_sigmoid: min(relu(x + 3), 6) / 6. x, or null.
Value matchHardSigmoid(Value v) {
  auto div = v.getDefiningOp<arith::DivFOp>();
  if (!div || !isExactly(div.getRhs(), 6.0))
    return {};
  Value six;
  Value r = matchMinMax(div.getLhs(), /*isMax=*/false, six);
  if (!r || !isExactly(six, 6.0))
    return {};
  Value shifted = matchRelu(r);
  return shifted ? otherOperand<arith::AddFOp>(
                       shifted, [](Value c) { return isExactly(c, 3.0); })
                 : Value();
}

/// x * f(x) for f matched by `inner` (silu, mish, hard_silu): x, or null.
template <typename Inner> Value matchSelfGated(Value v, Inner inner) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return {};
  for (auto [x, gate] : {std::pair(mul.getLhs(), mul.getRhs()),
                         std::pair(mul.getRhs(), mul.getLhs())})
    if (Value y = inner(gate); y && sameValue(y, x))
      return x;
  return {};
}

/// softsign: x / (|x| + 1). x, or null.
Value matchSoftsign(Value v) {
  auto div = v.getDefiningOp<arith::DivFOp>();
  if (!div)
    return {};
  Value x = div.getLhs();
  Value abs = otherOperand<arith::AddFOp>(
      div.getRhs(), [](Value c) { return isExactly(c, 1.0); });
  auto absOp = abs ? abs.getDefiningOp<math::AbsFOp>() : math::AbsFOp();
  return absOp && sameValue(absOp.getOperand(), x) ? x : Value();
}
} // namespace

Activation matchActivationGradient(Value result, Value g, Value y) {
  if (auto select = result.getDefiningOp<arith::SelectOp>()) {
    auto cmp = select.getCondition().getDefiningOp<arith::CmpFOp>();
    bool relu = cmp && cmp.getPredicate() == arith::CmpFPredicate::OGT &&
                cmp.getLhs() == y && isZero(cmp.getRhs()) &&
                select.getTrueValue() == g && isZero(select.getFalseValue());
    return relu ? Activation::Relu : Activation::None;
  }
  Value factor =
      otherOperand<arith::MulFOp>(result, [&](Value v) { return v == g; });
  if (!factor)
    return Activation::None;
  // tanh: 1 - y * y.
  auto sub = factor.getDefiningOp<arith::SubFOp>();
  auto square =
      sub ? sub.getRhs().getDefiningOp<arith::MulFOp>() : arith::MulFOp();
  if (square && isExactly(sub.getLhs(), 1.0) && square.getLhs() == y &&
      square.getRhs() == y)
    return Activation::Tanh;
  // sigmoid: y * (1 - y).
  Value rest =
      otherOperand<arith::MulFOp>(factor, [&](Value v) { return v == y; });
  sub = rest ? rest.getDefiningOp<arith::SubFOp>() : arith::SubFOp();
  if (sub && isExactly(sub.getLhs(), 1.0) && sub.getRhs() == y)
    return Activation::Sigmoid;
  return Activation::None;
}

StringRef activationName(Activation a) {
  switch (a) {
  case Activation::Relu:
    return "relu";
  case Activation::Tanh:
    return "tanh";
  case Activation::Sigmoid:
    return "sigmoid";
  case Activation::Gelu:
    return "gelu";
  case Activation::GeluTanh:
    return "gelu (tanh approximation)";
  case Activation::Silu:
    return "silu";
  case Activation::Elu:
    return "elu";
  case Activation::Selu:
    return "selu";
  case Activation::LeakyRelu:
    return "leaky_relu";
  case Activation::BoundedRelu:
    return "relu";
  case Activation::Softplus:
    return "softplus";
  case Activation::Mish:
    return "mish";
  case Activation::HardSigmoid:
    return "hard_sigmoid";
  case Activation::HardSilu:
    return "hard_silu";
  case Activation::Exp:
    return "exponential";
  case Activation::Softsign:
    return "softsign";
  case Activation::None:
    break;
  }
  return "";
}

/// The activation as the fusion remark names it, its parameter included.
std::string describeActivation(Activation activation, double param) {
  std::string s = activationName(activation).str();
  auto num = [](double v) {
    std::string t;
    llvm::raw_string_ostream(t) << llvm::format("%g", v);
    return t;
  };
  if (activation == Activation::Elu)
    s += " (alpha " + num(param) + ")";
  else if (activation == Activation::LeakyRelu)
    s += " (negative slope " + num(param) + ")";
  else if (activation == Activation::BoundedRelu)
    s = param == 6 ? "relu6" : "relu (max value " + num(param) + ")";
  return s;
}

Value matchActivation(Value result, Activation &activation, double &param) {
  activation = Activation::None;
  param = 0;
  auto found = [&](Activation a, Value x, double p = 0) {
    activation = a;
    param = p;
    return x;
  };
  double p = 0;
  Value alphaConst;
  if (Value x = matchRelu(result))
    return found(Activation::Relu, x);
  if (auto tanh = result.getDefiningOp<math::TanhOp>())
    return found(Activation::Tanh, tanh.getOperand());
  if (auto exp = result.getDefiningOp<math::ExpOp>())
    return found(Activation::Exp, exp.getOperand());
  if (Value x = matchSigmoid(result))
    return found(Activation::Sigmoid, x);
  if (bool approximate = false; Value x = matchGelu(result, approximate))
    return found(approximate ? Activation::GeluTanh : Activation::Gelu, x);
  if (Value x = matchSelfGated(result, matchSigmoid))
    return found(Activation::Silu, x);
  if (Value x = matchElu(result, p, alphaConst))
    return found(Activation::Elu, x, p);
  if (Value x = matchSelu(result))
    return found(Activation::Selu, x);
  if (Value x = matchLeakyRelu(result, p))
    return found(Activation::LeakyRelu, x, p);
  if (Value x = matchBoundedRelu(result, p))
    return found(Activation::BoundedRelu, x, p);
  if (Value x = matchSoftplus(result))
    return found(Activation::Softplus, x);
  if (Value x = matchSelfGated(result, [](Value g) {
        auto tanh = g.getDefiningOp<math::TanhOp>();
        return tanh ? matchSoftplus(tanh.getOperand()) : Value();
      }))
    return found(Activation::Mish, x);
  if (Value x = matchHardSigmoid(result))
    return found(Activation::HardSigmoid, x);
  if (Value x = matchSelfGated(result, matchHardSigmoid))
    return found(Activation::HardSilu, x);
  if (Value x = matchSoftsign(result))
    return found(Activation::Softsign, x);
  return result;
}

} // namespace codegen
} // namespace kcc
