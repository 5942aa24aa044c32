//===- Recurrence.h - kc.recurrence's attributes as the kernels take them -===//
//
// One reading of the cell, activation and direction attributes of
// kc.recurrence and kc.recurrence_grad, shared by their verifiers, the
// gradient rule, the interpreter and the compiled lowering.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_IR_RECURRENCE_H
#define KCC_IR_RECURRENCE_H

#include "ir/KcDialect.h"
#include "runtime/kernels/Recurrence.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/LogicalResult.h"

namespace kcc {
namespace kc {

/// The attributes of `op` (a RecurrenceOp or RecurrenceGradOp); an error on
/// the op naming what the kernels accept when a name is unknown.
template <typename OpTy>
mlir::FailureOr<kernels::RecurrenceParams> recurrenceParams(OpTy op) {
  kernels::RecurrenceParams p;
  if (!kernels::parseRecurrentCell(op.getCell().str(), p.cell))
    return op.emitOpError()
           << "unknown cell '" << op.getCell() << "' (expected "
           << kernels::recurrentCellNames() << ")";
  for (auto [name, slot] :
       {std::pair{op.getActivation(), &p.activation},
        std::pair{op.getRecurrentActivation(), &p.recurrentActivation}})
    if (!kernels::parseRecurrentActivation(name.str(), *slot))
      return op.emitOpError()
             << "unsupported activation '" << name << "' (expected "
             << kernels::recurrentActivationNames() << ")";
  p.resetAfter = op.getResetAfter();
  p.reverse = op.getReverse();
  return p;
}

} // namespace kc
} // namespace kcc

#endif // KCC_IR_RECURRENCE_H
