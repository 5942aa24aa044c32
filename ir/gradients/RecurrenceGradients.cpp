//===- RecurrenceGradients.cpp - Gradient rule of kc.recurrence -----------===//
//
// Backpropagation through time is one kc.recurrence_grad: the reverse loop
// over the states the forward saved, writing every operand's gradient into
// one packed buffer, which slices and reshapes take apart (each piece is
// contiguous, so the compiled slices move no data).
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/Recurrence.h"
#include "ir/gradients/GradientBuilder.h"

using namespace mlir;
using namespace kcc::kc;

llvm::SmallVector<Value> RecurrenceOp::buildGradients(OpBuilder &builder,
                                                      Value g) {
  GradientBuilder gb(builder, *this);
  auto states = getResult();
  int64_t size = 0;
  SmallVector<Value> operands = {getX(), getKernel(), getInitialState(),
                                 getRecurrentBias()};
  for (Value v : operands)
    size += GradientBuilder::typeOf(v).getNumElements();
  auto packedType = GradientBuilder::typeOf(states).clone({size});
  Value packed = builder.create<RecurrenceGradOp>(
      gb.location(), packedType, getKernel(), getInitialState(), states, g,
      getCellAttr(), getResetAfterAttr(), getActivationAttr(),
      getRecurrentActivationAttr(), getReverseAttr());
  SmallVector<Value> grads;
  int64_t offset = 0;
  for (Value v : operands) {
    int64_t n = GradientBuilder::typeOf(v).getNumElements();
    Value piece = gb.slice(packed, {offset}, {offset + n}, {1});
    grads.push_back(gb.reshape(piece, GradientBuilder::shapeOf(v)));
    offset += n;
  }
  return grads;
}
