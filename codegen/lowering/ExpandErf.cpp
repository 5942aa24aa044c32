//===- ExpandErf.cpp - f32 erf as the kernel library's --------------------===//
//
// runtime/kernels/Erf.h's erfOf, op for op: x + x Q(x^2) near 0 and
// sign(x) (1 - exp(L(|x|))) beyond, the exp being buildExpF32's, both
// computed and one selected.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/ExpandMath.h"
#include "codegen/lowering/MathBuilder.h"
#include "runtime/kernels/Erf.h"

using namespace mlir;
using namespace kcc::kernels;
using kcc::codegen::MathBuilder;
using P = arith::CmpFPredicate;

Value kcc::codegen::buildErfF32(OpBuilder &b, Location loc, Value x) {
  MathBuilder m(b, loc, x.getType());
  Value small = m.fma(m.polynomial(kErfSmall, m.mul(x, x)), x, x);
  Value a = m.abs(x);
  Value clamp = m.f(kErfClamp);
  Value t = m.select(m.cmp(P::OLT, a, clamp), a, clamp);
  Value e = buildExpF32(b, loc, m.polynomial(kErfLarge, t));
  Value large = m.copySign(m.sub(m.f(1.0f), e), x);
  return m.select(m.cmp(P::OGT, a, m.f(kErfSplit)), large, small);
}
