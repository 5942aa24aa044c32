//===- GatherGradients.cpp - Gradient rule of gather ----------------------===//
//
// The table's gradient scatter-adds the output gradient into the rows the
// indices name (kc.gather_grad): one pass over the batch after zeroing, no
// one-hot matrix. The indices carry no gradient.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

using namespace mlir;
using namespace kcc::kc;

llvm::SmallVector<Value> GatherOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  Value dTable = builder.create<GatherGradOp>(
      gb.location(), getTable().getType(), getIndices(), g);
  return {dTable, Value()};
}
