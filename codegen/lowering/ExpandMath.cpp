//===- ExpandMath.cpp - f32 math functions as the kernel library's -------===//
//
// kc-expand-math: every f32 math.tanh, math.exp, math.expm1, math.log,
// math.log1p and math.erf (scalar or vector) becomes the kernel library's
// arithmetic for it (runtime/kernels/Tanh.h, Exp.h, Log.h, Erf.h), op for
// op. Compiled and interpreted steps then round alike, and the loops that
// hold them vectorize: LLVM would lower each to a libm call per lane. The
// builders are in ExpandExp.cpp, ExpandLog.cpp and ExpandErf.cpp; tanh's is
// here: a clamp to [-7.9, 7.9], two polynomials in x^2 by fused
// multiply-adds, a division, the input itself near 0 and +-1 from |x| >= 9.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/ExpandMath.h"
#include "codegen/Passes.h"
#include "codegen/lowering/MathBuilder.h"
#include "runtime/kernels/Tanh.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/TypeSwitch.h"

#define DEBUG_TYPE "kc-expand-math"

STATISTIC(numExpanded, "f32 math functions expanded into arithmetic");

namespace kcc {
#define GEN_PASS_DEF_KCEXPANDMATH
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using P = arith::CmpFPredicate;

Value kcc::codegen::buildTanhF32(OpBuilder &b, Location loc, Value in) {
  using namespace kcc::kernels;
  MathBuilder m(b, loc, in.getType());
  // in < -c ? -c : (in > c ? c : in): ordered compares, so NaN passes.
  Value lo = m.f(-kTanhClamp), hi = m.f(kTanhClamp);
  Value x = m.select(m.cmp(P::OLT, in, lo), lo,
                     m.select(m.cmp(P::OGT, in, hi), hi, in));
  Value x2 = m.mul(x, x);
  Value p = m.polynomial(kTanhNumerator, x2);
  Value q = m.polynomial(kTanhDenominator, x2);
  Value r = m.div(m.mul(x, p), q);
  Value magnitude = m.abs(in);
  Value saturated =
      m.select(m.cmp(P::OGT, in, m.f(0.0f)), m.f(1.0f), m.f(-1.0f));
  return m.select(
      m.cmp(P::OLT, magnitude, m.f(kTanhSmall)), in,
      m.select(m.cmp(P::OGE, magnitude, m.f(kTanhSaturate)), saturated, r));
}

namespace {

/// The expansion of `op` if it is an f32 math function kcc computes
/// itself, else null.
Value expand(OpBuilder &b, Operation *op) {
  if (op->getNumOperands() != 1 || op->getNumResults() != 1 ||
      !getElementTypeOrSelf(op->getResult(0).getType()).isF32())
    return {};
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  return TypeSwitch<Operation *, Value>(op)
      .Case([&](math::TanhOp) -> Value {
        return kcc::codegen::buildTanhF32(b, loc, x);
      })
      .Case([&](math::ExpOp) -> Value {
        return kcc::codegen::buildExpF32(b, loc, x);
      })
      .Case([&](math::ExpM1Op) -> Value {
        return kcc::codegen::buildExpm1F32(b, loc, x);
      })
      .Case([&](math::LogOp) -> Value {
        return kcc::codegen::buildLogF32(b, loc, x);
      })
      .Case([&](math::Log1pOp) -> Value {
        return kcc::codegen::buildLog1pF32(b, loc, x);
      })
      .Case([&](math::ErfOp) -> Value {
        return kcc::codegen::buildErfF32(b, loc, x);
      })
      .Default([](Operation *) { return Value(); });
}

struct KcExpandMathPass : kcc::impl::KcExpandMathBase<KcExpandMathPass> {
  void runOnOperation() override {
    // One walk: each function is replaced by ops that hold none of them.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<math::TanhOp, math::ExpOp, math::ExpM1Op, math::LogOp,
              math::Log1pOp, math::ErfOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      if (Value expanded = expand(rewriter, op)) {
        rewriter.replaceOp(op, expanded);
        ++numExpanded;
      }
    }
  }
};

} // namespace
