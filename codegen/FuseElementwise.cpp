//===- FuseElementwise.cpp - Producer/consumer fusion of linalg.generic ---===//
//
// kc-fuse-elementwise: linalg's elementwise fusion with a wider rule.
// Upstream's linalg-fuse-elementwise-ops fuses a producer only into its
// single user. A train step is full of values with two users: the Adam
// moments m' and v' are returned and feed the parameter update, an
// activation feeds the next layer and is kept for backprop. Here such a
// producer is fused too when its consumer is elementwise (all parallel
// loops) and every other user comes after the consumer: the fused op
// computes the producer once and also yields its value (linalg keeps the
// producer's result as an extra result), so nothing is recomputed and
// nothing used before the consumer moves after it.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kc-fuse-elementwise"

namespace kcc {
#define GEN_PASS_DEF_KCFUSEELEMENTWISE
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

bool allParallel(linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops();
}

/// Recomputing a broadcast producer up to this many times per element is
/// accepted.
constexpr int64_t kMaxRecomputation = 64;

/// Why fusing `fused`'s producer into its consumer would cost more than it
/// saves, or null when it would not: a producer read through a broadcast is
/// recomputed at every consumer iteration that reads the same element, which
/// is cheap for adds and selects but not for math functions or divisions.
const char *costReason(OpOperand *fused) {
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!consumer || !producer)
    return nullptr;
  if (consumer.getMatchingIndexingMap(fused).isPermutation())
    return nullptr;
  // A few recomputations (a row statistic broadcast over ten classes) cost
  // less than the kernel a refusal leaves; a scalar broadcast over a
  // parameter tensor does not.
  auto iterations = [](linalg::GenericOp op) {
    int64_t n = 1;
    for (int64_t r : op.getStaticLoopRanges())
      n *= ShapedType::isDynamic(r) ? 1 : r;
    return n;
  };
  if (iterations(consumer) < kMaxRecomputation * iterations(producer))
    return nullptr;
  bool expensive = false;
  producer.getBody()->walk([&](Operation *op) {
    if (op->getDialect()->getNamespace() == "math" ||
        isa<arith::DivFOp, arith::RemFOp>(op))
      expensive = true;
  });
  return expensive ? "the producer is read through a broadcast and computes "
                     "math functions or divisions: fusing would recompute "
                     "them for each of at least 64 consumer elements"
                   : nullptr;
}

/// Single-use producers always (upstream's rule); multi-use producers into
/// an elementwise consumer when no other user precedes the consumer.
bool shouldFuse(OpOperand *fused, bool multiUse) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer)
    return false;
  if (producer->hasOneUse())
    return true;
  if (!multiUse)
    return false;
  auto producerOp = dyn_cast<linalg::GenericOp>(producer);
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  if (!producerOp || !consumer || !allParallel(producerOp) ||
      !allParallel(consumer) || producer->getBlock() != consumer->getBlock())
    return false;
  for (Operation *user : producer->getUsers())
    if (user != consumer.getOperation() &&
        (user->getBlock() != consumer->getBlock() ||
         user->isBeforeInBlock(consumer)))
      return false;
  return true;
}

/// linalg's FuseElementwiseOps, except that a producer's values the fused
/// op preserves replace the producer's remaining uses (upstream leaves the
/// producer in place for them, so a multi-use producer runs twice: two
/// loop nests, recomputed values). shouldFuse guaranteed those uses all come
/// after the consumer, where the fused op is.
/// Bytes of `t` when statically shaped, else 0.
int64_t tensorBytes(Type t) {
  auto shaped = dyn_cast<RankedTensorType>(t);
  if (!shaped || !shaped.hasStaticShape() ||
      !shaped.getElementType().isIntOrFloat())
    return 0;
  return shaped.getNumElements() *
         ((shaped.getElementTypeBitWidth() + 7) / 8);
}

struct FuseProducers : public OpRewritePattern<linalg::GenericOp> {
  FuseProducers(MLIRContext *ctx, bool multiUse, bool remarks)
      : OpRewritePattern(ctx), multiUse(multiUse), remarks(remarks) {}

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!linalg::areElementwiseOpsFusable(&operand) ||
          !shouldFuse(&operand, multiUse))
        continue;
      if (costReason(&operand))
        continue; // reported after the rewrite, with `remarks`
      Operation *producer = operand.get().getDefiningOp();
      // The producer's values only this consumer reads are never stored.
      int64_t saved = 0;
      for (Value r : producer->getResults())
        if (llvm::all_of(r.getUsers(), [&](Operation *u) {
              return u == consumer.getOperation();
            }))
          saved += tensorBytes(r.getType());
      Location producerLoc = producer->getLoc();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        return rewriter.notifyMatchFailure(consumer, "fusion failed");
      for (auto [orig, replacement] : fused->replacements) {
        Operation *fusedOp = fused->fusedOp;
        rewriter.replaceUsesWithIf(orig, replacement, [&](OpOperand &use) {
          return use.getOwner() != fusedOp;
        });
      }
      if (remarks && saved > 0)
        fused->fusedOp->emitRemark()
            << "elementwise fusion: a producer at " << producerLoc
            << " fused into its consumer; " << saved
            << " B never written to memory";
      rewriter.eraseOp(consumer);
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }

  bool multiUse, remarks;
};

struct KcFuseElementwisePass
    : public kcc::impl::KcFuseElementwiseBase<KcFuseElementwisePass> {
  using KcFuseElementwiseBase::KcFuseElementwiseBase;

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    bool multi = multiUse;
    linalg::ControlFusionFn singleUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    patterns.add<FuseProducers>(ctx, multi, remarks);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, singleUse);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, singleUse);
    GreedyRewriteConfig config;
    config.useTopDownTraversal = true;
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                            config)))
      LLVM_DEBUG(llvm::dbgs() << "fusion did not converge\n");
    // A fused multi-use producer's preserved result can end up unused (its
    // other users fused later): drop it, or it stays a buffer and a store.
    RewritePatternSet cleanup(ctx);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(cleanup);
    // Splat constants read as inputs (relu's zeros, a gradient's ones)
    // become scalars in the body: otherwise each is a buffer the size of
    // the activation. The control function declines every fusion: only
    // the folding patterns that come with it run here.
    linalg::populateElementwiseOpsFusionPatterns(
        cleanup, [](OpOperand *) { return false; });
    (void)applyPatternsAndFoldGreedily(getOperation(), std::move(cleanup));
    if (!remarks)
      return;
    // The fusions the cost rule refused are exactly those still possible.
    getOperation()->walk([&](linalg::GenericOp consumer) {
      for (OpOperand &operand : consumer->getOpOperands())
        if (linalg::areElementwiseOpsFusable(&operand) &&
            shouldFuse(&operand, multi))
          if (const char *reason = costReason(&operand))
            consumer.emitRemark()
                << "not fused with operand #" << operand.getOperandNumber()
                << ": " << reason;
    });
  }
};

} // namespace
