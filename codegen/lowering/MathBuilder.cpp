//===- MathBuilder.cpp - f32 arithmetic, scalar or vector, op by op -------===//

#include "codegen/lowering/MathBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace kcc::codegen;

MathBuilder::MathBuilder(OpBuilder &b, Location loc, Type floatType)
    : b(b), loc(loc), floatType(floatType), intType(b.getI32Type()) {
  if (auto vec = dyn_cast<VectorType>(floatType))
    intType = vec.clone(b.getI32Type());
}

Value MathBuilder::constant(Type type, TypedAttr value) {
  if (auto vec = dyn_cast<VectorType>(type))
    return b.create<arith::ConstantOp>(loc, vec,
                                       DenseElementsAttr::get(vec, value));
  return b.create<arith::ConstantOp>(loc, value);
}

Value MathBuilder::f(float v) {
  return constant(floatType, b.getF32FloatAttr(v));
}
Value MathBuilder::i(int32_t v) {
  return constant(intType, b.getI32IntegerAttr(v));
}

Value MathBuilder::add(Value a, Value c) {
  return b.create<arith::AddFOp>(loc, a, c);
}
Value MathBuilder::sub(Value a, Value c) {
  return b.create<arith::SubFOp>(loc, a, c);
}
Value MathBuilder::mul(Value a, Value c) {
  return b.create<arith::MulFOp>(loc, a, c);
}
Value MathBuilder::div(Value a, Value c) {
  return b.create<arith::DivFOp>(loc, a, c);
}
Value MathBuilder::fma(Value a, Value c, Value d) {
  return b.create<math::FmaOp>(loc, a, c, d);
}
Value MathBuilder::neg(Value a) { return b.create<arith::NegFOp>(loc, a); }
Value MathBuilder::abs(Value a) { return b.create<math::AbsFOp>(loc, a); }
Value MathBuilder::copySign(Value magnitude, Value sign) {
  return b.create<math::CopySignOp>(loc, magnitude, sign);
}

Value MathBuilder::polynomial(ArrayRef<float> coefficients, Value x) {
  Value acc = f(coefficients.front());
  for (float c : coefficients.drop_front())
    acc = fma(acc, x, f(c));
  return acc;
}

Value MathBuilder::cmp(arith::CmpFPredicate p, Value a, Value c) {
  return b.create<arith::CmpFOp>(loc, p, a, c);
}
Value MathBuilder::select(Value c, Value t, Value e) {
  return b.create<arith::SelectOp>(loc, c, t, e);
}

Value MathBuilder::bits(Value x) {
  return b.create<arith::BitcastOp>(loc, intType, x);
}
Value MathBuilder::fromBits(Value v) {
  return b.create<arith::BitcastOp>(loc, floatType, v);
}
Value MathBuilder::toFloat(Value v) {
  return b.create<arith::SIToFPOp>(loc, floatType, v);
}
Value MathBuilder::addi(Value a, Value c) {
  return b.create<arith::AddIOp>(loc, a, c);
}
Value MathBuilder::subi(Value a, Value c) {
  return b.create<arith::SubIOp>(loc, a, c);
}
Value MathBuilder::andi(Value a, Value c) {
  return b.create<arith::AndIOp>(loc, a, c);
}
Value MathBuilder::shl(Value a, int32_t n) {
  return b.create<arith::ShLIOp>(loc, a, i(n));
}
Value MathBuilder::shrSigned(Value a, int32_t n) {
  return b.create<arith::ShRSIOp>(loc, a, i(n));
}
Value MathBuilder::shrUnsigned(Value a, int32_t n) {
  return b.create<arith::ShRUIOp>(loc, a, i(n));
}
Value MathBuilder::cmpi(arith::CmpIPredicate p, Value a, Value c) {
  return b.create<arith::CmpIOp>(loc, p, a, c);
}

Value MathBuilder::pow2(Value k) { return fromBits(shl(addi(k, i(127)), 23)); }
