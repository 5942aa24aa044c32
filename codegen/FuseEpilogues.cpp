//===- FuseEpilogues.cpp - Bias and activation into GEMM/conv post-ops ----===//
//
// kc-fuse-epilogues: a Dense or Conv2D layer lowers to a library call and a
// linalg.generic that adds the bias and applies the activation. The library
// call can do both before the output leaves its cache (oneDNN's bias
// argument; the activation over the output right after the product, in
// place), so the generic, its pass over the output and its buffer go.
//
// The generic must read the call's output and nothing else of its size:
// inputs are the output (identity map) and at most one bias (the last loop
// dimension only); its body must be exactly `x + b`, `act(x)` or
// `act(x + b)`, where act is relu (`select(x < 0, 0, x)`, as
// kc-lower-to-linalg emits it, or `maximumf(x, 0)`), or tanh, sigmoid, gelu
// (both forms) or silu/swish in kc-lower-to-linalg's form, or one of the
// activations frontend/ops/Activations.cpp composes of kc ops as
// kc-lower-to-linalg and kc-fuse-elementwise leave it: elu (any alpha),
// selu, leaky_relu (any slope), relu6 and ReLU(max_value) (min(relu(x), m)),
// softplus, mish, hard_sigmoid, hard_silu, exponential and softsign. The
// alpha, slope or maximum is read from the body's constant and passed to
// the call (`actParam`); every other constant must be exactly the one the
// composition has (a body with another is left alone). Operands of
// commutative ops may come in either order, and the value the activation
// applies to may be computed several times (kc-fuse-elementwise inlines a
// shared producer once per use).
//
// In a training step only those whose gradient reads their output (relu,
// tanh, sigmoid, exponential) fuse: the others' gradients read their input
// (or an intermediate), which then has a second use or is a second result
// of the generic, and either keeps the generic; @forward (predict,
// evaluate) fuses them all.
//
//===----------------------------------------------------------------------===//

#include "codegen/LoweringUtils.h"
#include "codegen/Passes.h"
#include "runtime/LibraryCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Format.h"

#define DEBUG_TYPE "kc-fuse-epilogues"

STATISTIC(numFusedEpilogues, "epilogues fused into library calls");

namespace kcc {
#define GEN_PASS_DEF_KCFUSEEPILOGUES
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

/// The entry points with an epilogue variant, and where their output
/// pointer is.
struct FusableCall {
  StringRef base; ///< e.g. "kcc_rt_matmul"
  unsigned outPointer;
  unsigned numTrailing; ///< dims + attributes after the pointers
};
constexpr FusableCall kFusable[] = {{"kcc_rt_matmul", 2, 8},
                                    {"kcc_rt_conv2d", 2, 18}};

using Activation = EpilogueActivation;

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

/// What a matched generic computes.
struct Epilogue {
  Value bias; ///< null when there is none
  Activation activation = Activation::None;
  double param = 0; ///< elu's alpha, leaky_relu's slope, the relu's maximum
};

/// The activation as the fusion remark names it, its parameter included.
std::string describe(const Epilogue &e) {
  std::string s = activationName(e.activation).str();
  auto num = [](double v) {
    std::string t;
    llvm::raw_string_ostream(t) << llvm::format("%g", v);
    return t;
  };
  if (e.activation == Activation::Elu)
    s += " (alpha " + num(e.param) + ")";
  else if (e.activation == Activation::LeakyRelu)
    s += " (negative slope " + num(e.param) + ")";
  else if (e.activation == Activation::BoundedRelu)
    s = e.param == 6 ? "relu6" : "relu (max value " + num(e.param) + ")";
  return s;
}

bool isZero(Value v) {
  return matchPattern(v, m_AnyZeroFloat());
}

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

/// sigmoid(x) as kc-lower-to-linalg writes it:
/// e = exp(-|x|); s = 1 / (1 + e); x >= 0 ? s : e * s. The value sigmoid is
/// applied to, or null.
Value matchSigmoid(Value v) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGE ||
      !isZero(cmp.getRhs()))
    return {};
  Value x = cmp.getLhs();
  auto div = select.getTrueValue().getDefiningOp<arith::DivFOp>();
  auto mul = select.getFalseValue().getDefiningOp<arith::MulFOp>();
  if (!div || !mul || !isOne(div.getLhs()))
    return {};
  auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
  if (!add)
    return {};
  Value e = isOne(add.getLhs()) ? add.getRhs()
                                : isOne(add.getRhs()) ? add.getLhs() : Value();
  auto exp = e ? e.getDefiningOp<math::ExpOp>() : math::ExpOp();
  auto neg = exp ? exp.getOperand().getDefiningOp<arith::NegFOp>()
                 : arith::NegFOp();
  auto abs = neg ? neg.getOperand().getDefiningOp<math::AbsFOp>()
                 : math::AbsFOp();
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
  auto select = v.getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGE ||
      !isZero(cmp.getRhs()))
    return {};
  Value x = cmp.getLhs();
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

/// The activation `result` applies, recorded in `e`, and the value it
/// applies it to; `result` itself when it is none of them.
Value matchActivation(Value result, Epilogue &e) {
  auto found = [&](Activation a, Value x, double param = 0) {
    e.activation = a;
    e.param = param;
    return x;
  };
  double param = 0;
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
  if (Value x = matchElu(result, param, alphaConst))
    return found(Activation::Elu, x, param);
  if (Value x = matchSelu(result))
    return found(Activation::Selu, x);
  if (Value x = matchLeakyRelu(result, param))
    return found(Activation::LeakyRelu, x, param);
  if (Value x = matchBoundedRelu(result, param))
    return found(Activation::BoundedRelu, x, param);
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

/// Matches `generic` as an epilogue of the tensor `product`.
std::optional<Epilogue> matchEpilogue(linalg::GenericOp generic,
                                      Value product) {
  if (generic.getNumResults() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      generic.getNumDpsInputs() < 1 || generic.getNumDpsInputs() > 2)
    return std::nullopt;
  auto type = cast<RankedTensorType>(product.getType());
  if (generic.getResult(0).getType() != type)
    return std::nullopt;
  unsigned rank = type.getRank();
  Block &body = generic.getRegion().front();
  // The output's initial value must not be read.
  if (!body.getArgument(generic.getNumDpsInputs()).use_empty())
    return std::nullopt;
  Value x, b;
  Value bias;
  for (OpOperand *in : generic.getDpsInputOperands()) {
    AffineMap map = generic.getMatchingIndexingMap(in);
    Value arg = body.getArgument(in->getOperandNumber());
    if (in->get() == product && map.isIdentity() && !x) {
      x = arg;
      continue;
    }
    auto biasType = dyn_cast<RankedTensorType>(in->get().getType());
    if (!bias && biasType && biasType.getRank() == 1 &&
        biasType.getDimSize(0) == type.getDimSize(rank - 1) &&
        map.getNumResults() == 1 &&
        map.getResult(0) == getAffineDimExpr(rank - 1, generic.getContext())) {
      bias = in->get();
      b = arg;
      continue;
    }
    return std::nullopt;
  }
  if (!x)
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Value result = yield.getOperand(0);
  Epilogue e;
  result = matchActivation(result, e);
  if (bias) {
    auto add = result.getDefiningOp<arith::AddFOp>();
    if (!add || !((add.getLhs() == x && add.getRhs() == b) ||
                  (add.getLhs() == b && add.getRhs() == x)))
      return std::nullopt;
    e.bias = bias;
  } else if (result != x) {
    return std::nullopt;
  }
  // Nothing else in the body: every op is one of those matched above.
  for (Operation &op : body.without_terminator())
    if (!isa<arith::AddFOp, arith::SubFOp, arith::SelectOp, arith::CmpFOp,
             arith::OrIOp, arith::MaximumFOp, arith::MinimumFOp,
             arith::ConstantOp, arith::DivFOp, arith::MulFOp, arith::NegFOp,
             math::AbsFOp, math::ErfOp, math::ExpOp, math::LogOp, math::TanhOp>(
            op))
      return std::nullopt;
  if (!e.bias && e.activation == Activation::None)
    return std::nullopt;
  return e;
}

/// The memref.alloc a library call's pointer argument was taken from.
memref::AllocOp pointerSource(Value ptr) {
  Value m = codegen::pointerMemref(ptr);
  return m ? m.getDefiningOp<memref::AllocOp>() : memref::AllocOp();
}

bool dominatesCall(Value v, func::CallOp call) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == call->getBlock() ||
           arg.getOwner()->getParentOp()->isProperAncestor(call);
  Operation *def = v.getDefiningOp();
  return def->getBlock() == call->getBlock() && def->isBeforeInBlock(call);
}

/// The tensor a library call's pointer argument was taken from.
Value pointerTensor(Value ptr) {
  Value m = codegen::pointerMemref(ptr);
  auto toMemref = m ? m.getDefiningOp<bufferization::ToMemrefOp>()
                    : bufferization::ToMemrefOp();
  return toMemref ? toMemref.getTensor() : Value();
}

/// The product's single generic user, when it is the only use.
linalg::GenericOp singleGenericUser(memref::AllocOp out,
                                    bufferization::ToTensorOp &product) {
  for (Operation *user : out->getUsers())
    if (auto t = dyn_cast<bufferization::ToTensorOp>(user)) {
      if (product)
        return {};
      product = t;
    }
  if (!product || !product->hasOneUse())
    return {};
  return dyn_cast<linalg::GenericOp>(*product->user_begin());
}

/// max_pool2d_grad followed by relu's gradient mask on the pooling's input
/// (`select(x > 0, g, 0)`, the relu before the pooling) becomes
/// max_pool2d_grad_relu: the mask is applied where the gradient is routed,
/// and the pooling's input is then dead after the call, so
/// kc-reuse-buffers can write the gradient over it.
LogicalResult fuseMaxPoolGradMask(func::CallOp call, StringRef suffix,
                                  bool remarks) {
  // Windows that tile the input: the fused kernel's requirement.
  if (!codegen::isTiledMaxPoolGrad(call))
    return failure();
  Value x = pointerTensor(call.getOperand(0));
  memref::AllocOp out = pointerSource(call.getOperand(2));
  if (!x || !out)
    return failure();
  bufferization::ToTensorOp product;
  linalg::GenericOp mask = singleGenericUser(out, product);
  if (!mask || mask.getNumResults() != 1 || mask.getNumDpsInputs() != 2 ||
      mask.getNumLoops() != mask.getNumParallelLoops() ||
      mask.getResult(0).getType() != product.getType())
    return failure();
  Block &body = mask.getRegion().front();
  Value g, xArg;
  for (OpOperand *in : mask.getDpsInputOperands()) {
    if (!mask.getMatchingIndexingMap(in).isIdentity())
      return failure();
    if (in->get() == product.getResult())
      g = body.getArgument(in->getOperandNumber());
    else if (in->get() == x)
      xArg = body.getArgument(in->getOperandNumber());
  }
  if (!g || !xArg)
    return failure();
  auto select = cast<linalg::YieldOp>(body.getTerminator())
                    .getOperand(0)
                    .getDefiningOp<arith::SelectOp>();
  auto cmp = select ? select.getCondition().getDefiningOp<arith::CmpFOp>()
                    : arith::CmpFOp();
  if (!cmp || cmp.getPredicate() != arith::CmpFPredicate::OGT ||
      cmp.getLhs() != xArg || !isZero(cmp.getRhs()) ||
      select.getTrueValue() != g || !isZero(select.getFalseValue()))
    return failure();

  std::string name = ("kcc_rt_max_pool2d_grad_relu" + suffix).str();
  auto module = call->getParentOfType<ModuleOp>();
  auto fnType = call.getCalleeType();
  auto callee = module.lookupSymbol<func::FuncOp>(name);
  if (!callee) {
    OpBuilder mb(module.getBodyRegion());
    callee = mb.create<func::FuncOp>(module.getLoc(), name, fnType);
    callee.setPrivate();
  }
  OpBuilder b(call);
  auto fused = b.create<func::CallOp>(call.getLoc(), callee, call.getOperands());
  if (remarks)
    fused.emitRemark() << "fused into " << name
                       << ": relu's gradient mask (one pass over the input "
                          "gradient and its buffer saved)";
  mask.getResult(0).replaceAllUsesWith(product.getResult());
  mask.erase();
  call.erase();
  ++numFusedEpilogues;
  return success();
}

/// Fuses the epilogue of `call` if it has one.
LogicalResult fuse(func::CallOp call, bool remarks) {
  StringRef callee = call.getCallee();
  for (StringRef suffix : {"_f32", "_f64"})
    if (callee == ("kcc_rt_max_pool2d_grad" + suffix).str())
      return fuseMaxPoolGradMask(call, suffix, remarks);
  const FusableCall *kind = nullptr;
  StringRef suffix;
  for (const FusableCall &k : kFusable)
    if (callee.starts_with(k.base) &&
        (callee.drop_front(k.base.size()) == "_f32" ||
         callee.drop_front(k.base.size()) == "_f64")) {
      kind = &k;
      suffix = callee.drop_front(k.base.size());
    }
  if (!kind || call.getNumOperands() != kind->outPointer + 1 + kind->numTrailing)
    return failure();
  memref::AllocOp out = pointerSource(call.getOperand(kind->outPointer));
  if (!out)
    return failure();
  // The output becomes a tensor once, and that tensor feeds one generic.
  bufferization::ToTensorOp product;
  for (Operation *user : out->getUsers())
    if (auto t = dyn_cast<bufferization::ToTensorOp>(user)) {
      if (product)
        return failure();
      product = t;
    }
  if (!product || !product->hasOneUse())
    return failure();
  auto generic = dyn_cast<linalg::GenericOp>(*product->user_begin());
  if (!generic)
    return failure();
  std::optional<Epilogue> epilogue = matchEpilogue(generic, product);
  if (!epilogue || (epilogue->bias && !dominatesCall(epilogue->bias, call)))
    return failure();

  OpBuilder b(call);
  Location loc = call.getLoc();
  auto elt = cast<RankedTensorType>(product.getType()).getElementType();
  Value biasPtr;
  if (epilogue->bias) {
    auto t = cast<RankedTensorType>(epilogue->bias.getType());
    Value m = b.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(t.getShape(), elt), epilogue->bias,
        /*read_only=*/true);
    biasPtr = codegen::dataPointer(b, loc, m);
  } else {
    // Any valid pointer: the kernel reads no bias when has_bias is 0.
    biasPtr = call.getOperand(kind->outPointer);
  }
  SmallVector<Value> args(call.getOperands().take_front(kind->outPointer));
  args.push_back(biasPtr);
  llvm::append_range(args, call.getOperands().drop_front(kind->outPointer));
  auto i64 = [&](int64_t v) {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(v));
  };
  args.push_back(i64(epilogue->bias ? 1 : 0));
  args.push_back(i64(static_cast<int64_t>(epilogue->activation)));
  args.push_back(
      b.create<arith::ConstantOp>(loc, b.getF64FloatAttr(epilogue->param)));

  std::string name = (kind->base + "_epilogue" + suffix).str();
  auto module = call->getParentOfType<ModuleOp>();
  auto fnType = b.getFunctionType(ValueRange(args).getTypes(), {});
  auto callee2 = module.lookupSymbol<func::FuncOp>(name);
  if (!callee2) {
    OpBuilder mb(module.getBodyRegion());
    callee2 = mb.create<func::FuncOp>(module.getLoc(), name, fnType);
    callee2.setPrivate();
  }
  if (callee2.getFunctionType() != fnType)
    return call.emitOpError("conflicting declaration of ") << name;
  auto fused = b.create<func::CallOp>(loc, callee2, args);
  if (remarks) {
    bool act = epilogue->activation != Activation::None;
    fused.emitRemark() << "fused into " << name << ": "
                       << (epilogue->bias ? "bias" : "")
                       << (epilogue->bias && act ? " + " : "")
                       << describe(*epilogue)
                       << " (one pass over the output and its buffer saved)";
  }
  generic.getResult(0).replaceAllUsesWith(product.getResult());
  generic.erase();
  call.erase();
  ++numFusedEpilogues;
  return success();
}

struct KcFuseEpiloguesPass
    : public kcc::impl::KcFuseEpiloguesBase<KcFuseEpiloguesPass> {
  using KcFuseEpiloguesBase::KcFuseEpiloguesBase;

  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation()->walk([&](func::CallOp call) { calls.push_back(call); });
    for (func::CallOp call : calls)
      (void)fuse(call, remarks);
    // Declarations the fused calls replaced.
    for (auto f : llvm::make_early_inc_range(
             getOperation().getOps<func::FuncOp>()))
      if (f.isExternal() && f.getSymName().starts_with(codegen::kLibraryCallPrefix) &&
          f.symbolKnownUseEmpty(getOperation()))
        f.erase();
  }
};

} // namespace
