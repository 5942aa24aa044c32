//===- LossGradients.cpp - Gradient rule of ctc_loss ----------------------===//
//
// The logits' gradient comes from the kernel that computed the loss
// (kc.ctc_loss_grad: forward and backward over the same lattice), weighed
// per example by the output gradient. The integer labels carry none.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

using namespace mlir;
using namespace kcc::kc;

llvm::SmallVector<Value> CtcLossOp::buildGradients(OpBuilder &builder,
                                                   Value g) {
  GradientBuilder gb(builder, *this);
  Value dLogits = builder.create<CtcLossGradOp>(
      gb.location(), getLogits().getType(), getLogits(), getLabels(), g);
  return {dLogits, Value()};
}
