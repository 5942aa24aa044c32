//===- OpKernels.h - Interpreter dispatch from kc ops to kernels -*- C++
//-*-===//
//
// Internal to the interpreter: the table that maps each kc op (by TypeID) to
// a function that reads the op's attributes, allocates its result through the
// run's environment and calls the matching runtime/kernels function.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_INTERPRETER_OPKERNELS_H
#define KCC_ENGINE_INTERPRETER_OPKERNELS_H

#include "runtime/NDArray.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"

#include <functional>

namespace kcc {
namespace interp {

/// What an op kernel needs from the running interpreter besides operands.
class OpEnv {
public:
  virtual ~OpEnv() = default;
  /// A fresh buffer with `result`'s shape and dtype, counted in the stats.
  virtual NDArray allocate(mlir::Value result) = 0;
  /// The (cached) array of a constant attribute.
  virtual NDArray constant(mlir::ElementsAttr value) = 0;
};

/// The operands' arrays, in operand order.
using Operands = llvm::ArrayRef<const NDArray *>;
/// Computes the single result of an op.
using OpKernel = std::function<NDArray(mlir::Operation *, Operands, OpEnv &)>;

/// The kernel for ops named `name`, or null when the interpreter has none.
const OpKernel *lookupOpKernel(mlir::OperationName name);

/// The shape of a ranked tensor type.
Shape shapeOf(mlir::Type tensorType);

/// Converts a constant attribute to a new NDArray; throws kcc::Error for
/// element types or attribute kinds it cannot read.
NDArray elementsToNDArray(mlir::ElementsAttr value);

} // namespace interp
} // namespace kcc

#endif // KCC_ENGINE_INTERPRETER_OPKERNELS_H
