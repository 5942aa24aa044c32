//===- PoolBeforeActivation.cpp - Max pooling before relu ---------------===//
//
// See kc-pool-before-activation in Passes.td for why the swap is exact.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace kcc {
#define GEN_PASS_DEF_KCPOOLBEFOREACTIVATION
#include "passes/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

/// Whether `v` is a convolution's output, with or without its bias added:
/// the relu on it would be the library call's epilogue, a pass of its own
/// over the output. A relu on anything else (batch normalization, say)
/// joins the kernel that computes its input, where it costs nothing.
bool isConvolution(Value v) {
  if (v.getDefiningOp<kc::Conv2DOp>())
    return true;
  auto add = v.getDefiningOp<kc::AddOp>();
  if (!add)
    return false;
  Value lhs = add.getLhs(), rhs = add.getRhs();
  return (lhs.getDefiningOp<kc::Conv2DOp>() &&
          rhs.getDefiningOp<kc::BroadcastToOp>()) ||
         (rhs.getDefiningOp<kc::Conv2DOp>() &&
          lhs.getDefiningOp<kc::BroadcastToOp>());
}

struct PoolBeforeActivation
    : kcc::impl::KcPoolBeforeActivationBase<PoolBeforeActivation> {
  void runOnOperation() override {
    SmallVector<kc::MaxPool2DOp> pools;
    getOperation().walk([&](kc::MaxPool2DOp pool) {
      auto relu = pool.getX().getDefiningOp<kc::ReluOp>();
      if (relu && relu->hasOneUse() && isConvolution(relu.getX()))
        pools.push_back(pool);
    });
    for (kc::MaxPool2DOp pool : pools) {
      auto relu = pool.getX().getDefiningOp<kc::ReluOp>();
      OpBuilder b(pool);
      auto pooled = b.create<kc::MaxPool2DOp>(
          pool.getLoc(), pool.getType(), relu.getX(), pool.getWindowAttr(),
          pool.getStridesAttr(), pool.getPaddingAttr());
      auto activated =
          b.create<kc::ReluOp>(relu.getLoc(), pool.getType(), pooled);
      pool.replaceAllUsesWith(activated.getResult());
      pool.erase();
      relu.erase();
      ++numSwapped;
    }
  }
};

} // namespace
