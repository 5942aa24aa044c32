//===- WidenBF16.cpp - bfloat16 kc ops computed in float32 ----------------===//
//
// kc-widen-bf16: every kc op with a bfloat16 operand or result, except the
// casts, reshapes and the products (which run on oneDNN's bfloat16
// kernels), computes in float32 between kc.cast ops; kc-expand-bf16 turns
// the arith.extf / arith.truncf those casts lower to into integer ops.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace kcc {
#define GEN_PASS_DEF_KCWIDENBF16
#define GEN_PASS_DEF_KCEXPANDBF16
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

/// The tensor type `t` with f32 elements where it has bf16 ones, else null.
RankedTensorType widened(Type t) {
  auto tensor = dyn_cast<RankedTensorType>(t);
  if (!tensor || !tensor.getElementType().isBF16())
    return {};
  return tensor.clone(Float32Type::get(t.getContext()));
}

/// Ops that take bfloat16 as it is.
bool keepsBF16(Operation *op) {
  return isa<kc::CastOp, kc::ReshapeOp, kc::ConstantOp, kc::MatmulOp,
             kc::BatchMatmulOp, kc::Conv2DOp, kc::Conv2DBackpropInputOp,
             kc::Conv2DBackpropFilterOp>(op);
}

struct KcWidenBF16Pass : kcc::impl::KcWidenBF16Base<KcWidenBF16Pass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (!isa<kc::KcDialect>(op->getDialect()) || keepsBF16(op))
        return;
      auto isBF16 = [](Type t) { return bool(widened(t)); };
      if (llvm::any_of(op->getOperandTypes(), isBF16) ||
          llvm::any_of(op->getResultTypes(), isBF16))
        ops.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      b.setInsertionPoint(op);
      for (OpOperand &operand : op->getOpOperands())
        if (RankedTensorType wide = widened(operand.get().getType()))
          operand.set(b.create<kc::CastOp>(op->getLoc(), wide, operand.get()));
      b.setInsertionPointAfter(op);
      for (OpResult result : op->getResults()) {
        Type narrow = result.getType();
        RankedTensorType wide = widened(narrow);
        if (!wide)
          continue;
        result.setType(wide);
        auto back = b.create<kc::CastOp>(op->getLoc(), narrow, result);
        result.replaceAllUsesExcept(back, back);
      }
      ++numWidened;
    }
  }
};

struct KcExpandBF16Pass : kcc::impl::KcExpandBF16Base<KcExpandBF16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
