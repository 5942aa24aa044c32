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

/// tanh of `in` (f32 or a vector of f32) as runtime/kernels/Tanh.h's
/// tanhOf computes it.
mlir::Value buildTanhF32(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value in);

} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_EXPANDMATH_H
