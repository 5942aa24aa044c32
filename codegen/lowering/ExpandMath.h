//===- ExpandMath.h - Math functions as the kernel library's ---*- C++ -*-===//
//
// Builders that emit, op for op, what runtime/kernels computes for a math
// function, so generated code and the interpreter round alike.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_LOWERING_EXPANDMATH_H
#define KCC_CODEGEN_LOWERING_EXPANDMATH_H

#include "mlir/IR/Builders.h"

namespace kcc {
namespace codegen {

// Each takes and returns f32 or a vector of f32.

/// runtime/kernels/Tanh.h's tanhOf (ExpandMath.cpp).
mlir::Value buildTanhF32(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value in);
/// runtime/kernels/Exp.h's expOf and expm1Of (ExpandExp.cpp).
mlir::Value buildExpF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
mlir::Value buildExpm1F32(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x);
/// runtime/kernels/Log.h's logOf and log1pOf (ExpandLog.cpp).
mlir::Value buildLogF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);
mlir::Value buildLog1pF32(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value x);
/// runtime/kernels/Erf.h's erfOf (ExpandErf.cpp).
mlir::Value buildErfF32(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_EXPANDMATH_H
