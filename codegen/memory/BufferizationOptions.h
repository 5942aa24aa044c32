//===- BufferizationOptions.h - How kc bufferizes -------------*- C++ -*-===//
//
// The one-shot bufferization options kc-one-shot-bufferize and the
// out-param conversion share: identity layouts at function boundaries, so
// the entry's memrefs are plain contiguous arrays, and copies as
// linalg.copy.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_MEMORY_BUFFERIZATIONOPTIONS_H
#define KCC_CODEGEN_MEMORY_BUFFERIZATIONOPTIONS_H

#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"

namespace kcc {

/// A copy as linalg.copy: it becomes loops (a kernel) like everything else,
/// where a strided memref.copy would need the runner-utils library.
mlir::LogicalResult copyAsLinalg(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value from, mlir::Value to);

/// Whole-module bufferization with identity layouts at function boundaries
/// and copyAsLinalg.
mlir::bufferization::OneShotBufferizationOptions bufferizationOptions();

} // namespace kcc

#endif // KCC_CODEGEN_MEMORY_BUFFERIZATIONOPTIONS_H
