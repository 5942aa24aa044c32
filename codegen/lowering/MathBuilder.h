//===- MathBuilder.h - f32 arithmetic, scalar or vector, op by op -*- C++
//-*-===//
//
// The few ops the math expansions (ExpandMath.cpp, ExpandExp.cpp,
// ExpandLog.cpp, ExpandErf.cpp) are written in, on f32 or a vector of f32
// and on the i32 values of the same shape that hold its bits, so each
// expansion reads line for line as its C++ in runtime/kernels.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_LOWERING_MATHBUILDER_H
#define KCC_CODEGEN_LOWERING_MATHBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

namespace kcc {
namespace codegen {

class MathBuilder {
public:
  /// `floatType` is f32 or a vector of f32; the integers take its shape.
  MathBuilder(mlir::OpBuilder &b, mlir::Location loc, mlir::Type floatType);

  // Constants.
  mlir::Value f(float v);
  mlir::Value i(int32_t v);

  // f32.
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value fma(mlir::Value a, mlir::Value b, mlir::Value c);
  mlir::Value neg(mlir::Value a);
  mlir::Value abs(mlir::Value a);
  mlir::Value copySign(mlir::Value magnitude, mlir::Value sign);
  /// Horner's rule by fma, `coefficients` highest power first.
  mlir::Value polynomial(llvm::ArrayRef<float> coefficients, mlir::Value x);
  mlir::Value cmp(mlir::arith::CmpFPredicate p, mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value c, mlir::Value t, mlir::Value f);

  // i32, wrapping, and the moves between the two.
  mlir::Value bits(mlir::Value x);
  mlir::Value fromBits(mlir::Value bits);
  mlir::Value toFloat(mlir::Value i);
  mlir::Value addi(mlir::Value a, mlir::Value b);
  mlir::Value subi(mlir::Value a, mlir::Value b);
  mlir::Value andi(mlir::Value a, mlir::Value b);
  mlir::Value shl(mlir::Value a, int32_t n);
  mlir::Value shrSigned(mlir::Value a, int32_t n);
  mlir::Value shrUnsigned(mlir::Value a, int32_t n);
  mlir::Value cmpi(mlir::arith::CmpIPredicate p, mlir::Value a, mlir::Value b);
  /// 2^k for k in [-126, 127], as runtime/kernels/FloatBits.h's pow2Of.
  mlir::Value pow2(mlir::Value k);

private:
  mlir::Value constant(mlir::Type type, mlir::TypedAttr value);

  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::Type floatType, intType;
};

} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_MATHBUILDER_H
