//===- ExpandExp.cpp - f32 exp and expm1 as the kernel library's ----------===//
//
// runtime/kernels/Exp.h's expOf and expm1Of, op for op: the rounding of
// x / ln2 by adding 1.5 * 2^23 (k read from the sum's bits), the
// Cody-Waite reduction, Cephes' polynomial by fma, 2^k built in the
// exponent bits, and selects for the ranges where the result is +inf, 0 or
// -1.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Exp.h"
#include "codegen/lowering/ExpandMath.h"
#include "codegen/lowering/MathBuilder.h"

#include <limits>

using namespace mlir;
using namespace kcc::kernels;
using kcc::codegen::MathBuilder;
using P = arith::CmpFPredicate;

namespace {

/// x = k ln2 + s, as reduceExp.
struct Reduced {
  Value s, k;
};

Reduced reduce(MathBuilder &m, Value x) {
  Value t = m.fma(x, m.f(kLog2E), m.f(kRoundToInteger));
  Value k = m.sub(t, m.f(kRoundToInteger));
  Value s = m.fma(k, m.f(-kLn2Hi), x);
  s = m.fma(k, m.f(-kLn2Lo), s);
  return {s, m.subi(m.bits(t), m.bits(m.f(kRoundToInteger)))};
}

} // namespace

Value kcc::codegen::buildExpF32(OpBuilder &b, Location loc, Value x) {
  MathBuilder m(b, loc, x.getType());
  Reduced r = reduce(m, x);
  Value y =
      m.add(m.fma(m.polynomial(kExpPolynomial, r.s), m.mul(r.s, r.s), r.s),
            m.f(1.0f));
  Value half = m.shrSigned(r.k, 1);
  y = m.mul(m.mul(y, m.pow2(half)), m.pow2(m.subi(r.k, half)));
  Value inf = m.f(std::numeric_limits<float>::infinity());
  y = m.select(m.cmp(P::OLT, x, m.f(kExpUnderflow)), m.f(0.0f), y);
  return m.select(m.cmp(P::OGT, x, m.f(kExpOverflow)), inf, y);
}

Value kcc::codegen::buildExpm1F32(OpBuilder &b, Location loc, Value x) {
  MathBuilder m(b, loc, x.getType());
  Reduced r = reduce(m, x);
  Value half = m.pow2(m.subi(r.k, m.i(1)));
  Value head = m.fma(r.s, half, m.sub(half, m.f(0.5f)));
  Value tail = m.mul(m.polynomial(kExpPolynomial, r.s), m.mul(r.s, r.s));
  Value y = m.mul(m.f(2.0f), m.fma(tail, half, head));
  Value inf = m.f(std::numeric_limits<float>::infinity());
  y = m.select(m.cmp(P::OLT, x, m.f(kExpm1Saturate)), m.f(-1.0f), y);
  y = m.select(m.cmp(P::OGT, x, m.f(kExpm1Overflow)), inf, y);
  return m.select(m.cmp(P::OLT, m.abs(x), m.f(kExpm1Small)), x, y);
}
