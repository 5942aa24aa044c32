//===- ExpandMath.cpp - f32 tanh as the kernel library computes it -------===//
//
// kc-expand-math: every f32 math.tanh (scalar or vector) becomes the
// kernel library's tanh (runtime/kernels/Tanh.h), op for op: a clamp to
// [-7.9, 7.9], two polynomials in x^2 by fused multiply-adds, a division,
// the input itself near 0 and +-1 from |x| >= 9. Compiled and interpreted steps
// then round alike, the loops that hold a tanh vectorize (a libm call on a
// vector is one call per lane), and the cost per element drops from glibc's
// tanhf (through expm1f) to a dozen arithmetic instructions.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/ExpandMath.h"
#include "codegen/Passes.h"
#include "runtime/kernels/Tanh.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-expand-math"

STATISTIC(numExpandedTanh, "f32 tanh expanded into arithmetic");

namespace kcc {
#define GEN_PASS_DEF_KCEXPANDMATH
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

/// `v` as a constant of `type` (f32, or a vector of f32).
Value constantLike(OpBuilder &b, Location loc, Type type, float v) {
  FloatAttr f = b.getF32FloatAttr(v);
  if (auto vec = dyn_cast<VectorType>(type))
    return b.create<arith::ConstantOp>(loc, vec,
                                       DenseElementsAttr::get(vec, f));
  return b.create<arith::ConstantOp>(loc, f);
}

} // namespace

Value kcc::codegen::buildTanhF32(OpBuilder &b, Location loc, Value in) {
  using namespace kcc::kernels;
  Type type = in.getType();
  auto cst = [&](float v) { return constantLike(b, loc, type, v); };
  auto cmp = [&](arith::CmpFPredicate p, Value l, Value r) {
    return b.create<arith::CmpFOp>(loc, p, l, r);
  };
  auto select = [&](Value c, Value t, Value f) {
    return b.create<arith::SelectOp>(loc, c, t, f);
  };
  // in < -c ? -c : (in > c ? c : in): ordered compares, so NaN passes.
  Value lo = cst(-kTanhClamp), hi = cst(kTanhClamp);
  Value x = select(cmp(arith::CmpFPredicate::OLT, in, lo), lo,
                   select(cmp(arith::CmpFPredicate::OGT, in, hi), hi, in));
  Value x2 = b.create<arith::MulFOp>(loc, x, x);
  auto polynomial = [&](ArrayRef<float> coefficients) {
    Value acc = cst(coefficients.front());
    for (float c : coefficients.drop_front())
      acc = b.create<math::FmaOp>(loc, acc, x2, cst(c));
    return acc;
  };
  Value p = polynomial(kTanhNumerator), q = polynomial(kTanhDenominator);
  Value r = b.create<arith::DivFOp>(loc, b.create<arith::MulFOp>(loc, x, p), q);
  Value magnitude = b.create<math::AbsFOp>(loc, in);
  Value saturated = select(cmp(arith::CmpFPredicate::OGT, in, cst(0.0f)),
                           cst(1.0f), cst(-1.0f));
  return select(
      cmp(arith::CmpFPredicate::OLT, magnitude, cst(kTanhSmall)), in,
      select(cmp(arith::CmpFPredicate::OGE, magnitude, cst(kTanhSaturate)),
             saturated, r));
}

namespace {

struct KcExpandMathPass : kcc::impl::KcExpandMathBase<KcExpandMathPass> {
  void runOnOperation() override {
    // One walk: each tanh is replaced by ops that hold none.
    SmallVector<math::TanhOp> tanhs;
    getOperation()->walk([&](math::TanhOp op) {
      if (getElementTypeOrSelf(op.getType()).isF32())
        tanhs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (math::TanhOp op : tanhs) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOp(op, kcc::codegen::buildTanhF32(rewriter, op.getLoc(),
                                                        op.getOperand()));
      ++numExpandedTanh;
    }
  }
};

} // namespace
