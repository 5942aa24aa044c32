//===- ExpandLog.cpp - f32 log and log1p as the kernel library's ----------===//
//
// runtime/kernels/Log.h's logOf and log1pOf, op for op: the exponent and
// the mantissa in [sqrt(2)/2, sqrt(2)) read from the bits (subnormals
// scaled first), fdlibm's f - f^2/2 + s (f^2/2 + R(s^2)) by fma, k ln2 in
// two parts, log1p's correction for the rounding of 1 + x, and selects for
// 0, the negatives, +inf and NaN.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/ExpandMath.h"
#include "codegen/lowering/MathBuilder.h"
#include "runtime/kernels/Log.h"

#include <limits>

using namespace mlir;
using namespace kcc::kernels;
using kcc::codegen::MathBuilder;
using P = arith::CmpFPredicate;
using I = arith::CmpIPredicate;

namespace {

/// 2^k m, m in [sqrt(2)/2, sqrt(2)), as reduceLog.
struct Reduced {
  Value m, k;
};

Reduced reduce(MathBuilder &m, Value x) {
  Value bits = m.addi(m.bits(x), m.i(kLogMantissaShift));
  Value k = m.subi(m.shrUnsigned(bits, 23), m.i(127));
  Value mantissa = m.fromBits(
      m.addi(m.andi(bits, m.i(kMantissaMask)), m.i(kLogSqrtHalfBits)));
  return {mantissa, k};
}

/// As logOfReduced.
Value logOfReduced(MathBuilder &m, Value f, Value k, Value c) {
  Value s = m.div(f, m.add(m.f(2.0f), f));
  Value z = m.mul(s, s);
  Value w = m.mul(z, z);
  Value wTerms = m.mul(w, m.fma(w, m.f(kLogPoly[3]), m.f(kLogPoly[1])));
  Value r = m.fma(z, m.fma(w, m.f(kLogPoly[2]), m.f(kLogPoly[0])), wTerms);
  Value halfF = m.mul(m.f(0.5f), f);
  Value y = m.fma(s, m.fma(halfF, f, r), m.fma(k, m.f(kLogLn2Lo), c));
  return m.fma(k, m.f(kLogLn2Hi), m.add(m.fma(m.neg(halfF), f, y), f));
}

} // namespace

Value kcc::codegen::buildLogF32(OpBuilder &b, Location loc, Value x) {
  MathBuilder m(b, loc, x.getType());
  Value subnormal = m.cmp(P::OLT, x, m.f(kSmallestNormal));
  Reduced r = reduce(m, m.select(subnormal, m.mul(x, m.f(kTwoTo23)), x));
  Value k = m.select(subnormal, m.subi(r.k, m.i(23)), r.k);
  Value y = logOfReduced(m, m.sub(r.m, m.f(1.0f)), m.toFloat(k), m.f(0.0f));
  constexpr float inf = std::numeric_limits<float>::infinity();
  y = m.select(m.cmp(P::OEQ, x, m.f(inf)), m.f(inf), y);
  y = m.select(m.cmp(P::OEQ, x, m.f(0.0f)), m.f(-inf), y);
  return m.select(m.cmp(P::ULT, x, m.f(0.0f)),
                  m.f(std::numeric_limits<float>::quiet_NaN()), y);
}

Value kcc::codegen::buildLog1pF32(OpBuilder &b, Location loc, Value x) {
  MathBuilder m(b, loc, x.getType());
  Value one = m.f(1.0f);
  Value u = m.add(one, x);
  Reduced r = reduce(m, u);
  Value c = m.div(m.select(m.cmpi(I::sge, r.k, m.i(2)), m.sub(one, m.sub(u, x)),
                           m.sub(x, m.sub(u, one))),
                  u);
  c = m.select(m.cmpi(I::slt, r.k, m.i(25)), c, m.f(0.0f));
  Value exact = m.cmpi(I::eq, r.k, m.i(0));
  Value f = m.select(exact, x, m.sub(r.m, one));
  c = m.select(exact, m.f(0.0f), c);
  Value y = logOfReduced(m, f, m.toFloat(r.k), c);
  constexpr float inf = std::numeric_limits<float>::infinity();
  y = m.select(m.cmp(P::OLT, m.abs(x), m.f(kLog1pSmall)), x, y);
  y = m.select(m.cmp(P::OEQ, x, m.f(inf)), m.f(inf), y);
  y = m.select(m.cmp(P::OEQ, x, m.f(-1.0f)), m.f(-inf), y);
  return m.select(m.cmp(P::ULT, x, m.f(-1.0f)),
                  m.f(std::numeric_limits<float>::quiet_NaN()), y);
}
