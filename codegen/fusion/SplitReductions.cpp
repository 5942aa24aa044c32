//===- SplitReductions.cpp - Reductions over the batch in two parallel steps //
//
// kc-split-reductions: a sum over the batch and more (BatchNormalization's
// statistics and their gradients over N, H and W; LayerNormalization's gamma
// and beta gradients over B and T) is a loop nest whose outermost loop is a
// reduction, which kc-lower-loops and kc-fuse-loops must keep serial: every
// iteration adds into the same accumulator. Split in two, it runs on all
// cores:
//
//   partial[n, c] = sum over the inner reduced dims of f(x[n, ...])  (n
//   parallel) out[c]        = init[c] + sum over n of partial[n, c] (small)
//
// The partial sums are added in the order of n, so the result does not
// depend on the thread count. Only sums split, by the kernel library's rule
// (runtime/kernels/SplitSum.h: big enough, at most 512 partial rows, each
// partial element summing at least 8 points), which its reduce follows
// too: compiled and interpreted steps round alike.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/lowering/LoweringUtils.h"
#include "runtime/kernels/SplitSum.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-split-reductions"

STATISTIC(numSplit, "reductions split into parallel partial sums");

namespace kcc {
#define GEN_PASS_DEF_KCSPLITREDUCTIONS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

/// Whether each result of `op` is `acc + v` (or `v + acc`) of its own
/// accumulator `acc`, which nothing else in the body reads.
bool isSumOfEachOutput(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!isa<FloatType>(getElementTypeOrSelf(init.get().getType())))
      return false;
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    unsigned i = init.getOperandNumber() - op.getNumDpsInputs();
    auto add = yield.getOperand(i).getDefiningOp<arith::AddFOp>();
    if (!add || !acc.hasOneUse() ||
        (add.getLhs() != acc && add.getRhs() != acc))
      return false;
  }
  return true;
}

/// Whether `op` reduces over its outermost loop and would gain from the
/// split: the kernel library's rule (runtime/kernels/SplitSum.h), so the
/// interpreter adds in the same order.
bool shouldSplit(linalg::GenericOp op, int64_t threshold) {
  if (!op.hasPureTensorSemantics() || op.getNumLoops() < 2 ||
      op.getNumDpsInits() == 0 ||
      op.getIteratorTypesArray()[0] != utils::IteratorType::reduction)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  int64_t points = 1;
  for (int64_t r : ranges)
    points *= r;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    int64_t results =
        cast<RankedTensorType>(init.get().getType()).getNumElements();
    if (!kernels::splitsSum(points, results, ranges[0],
                            op.getNumReductionLoops(), threshold))
      return false;
  }
  return isSumOfEachOutput(op);
}

void split(IRRewriter &rewriter, linalg::GenericOp op) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  int64_t rows = op.getStaticLoopRanges()[0];
  AffineExpr d0 = getAffineDimExpr(0, ctx);

  // The partial generic: the same body and inputs, the outermost loop
  // parallel, each output gaining a leading dim indexed by it.
  SmallVector<Value> partialInits;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(in));
  for (OpOperand &init : op.getDpsInitsMutable()) {
    auto type = cast<RankedTensorType>(init.get().getType());
    SmallVector<int64_t> shape = {rows};
    llvm::append_range(shape, type.getShape());
    partialInits.push_back(codegen::filledTensor(
        rewriter, loc, RankedTensorType::get(shape, type.getElementType()),
        0.0));
    AffineMap map = op.getMatchingIndexingMap(&init);
    SmallVector<AffineExpr> results = {d0};
    llvm::append_range(results, map.getResults());
    maps.push_back(AffineMap::get(map.getNumDims(), 0, results, ctx));
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators[0] = utils::IteratorType::parallel;
  auto partial = rewriter.create<linalg::GenericOp>(
      loc, ValueRange(partialInits).getTypes(), op.getDpsInputs(), partialInits,
      maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().begin());
  partial->setDiscardableAttrs(op->getDiscardableAttrDictionary());

  // Each output: its initial value plus the partial rows, in row order.
  SmallVector<Value> results;
  for (auto [init, p] : llvm::zip(op.getDpsInits(), partial.getResults())) {
    auto type = cast<RankedTensorType>(init.getType());
    unsigned rank = type.getRank();
    AffineMap inMap = AffineMap::getMultiDimIdentityMap(rank + 1, ctx);
    AffineMap outMap =
        AffineMap::get(rank + 1, 0, inMap.getResults().drop_front(), ctx);
    SmallVector<utils::IteratorType> combineIterators(
        rank + 1, utils::IteratorType::parallel);
    combineIterators[0] = utils::IteratorType::reduction;
    auto combine = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{type}, ValueRange{p}, ValueRange{init},
        ArrayRef<AffineMap>{inMap, outMap}, combineIterators,
        [](OpBuilder &b, Location l, ValueRange args) {
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::AddFOp>(l, args[1], args[0])});
        });
    results.push_back(combine.getResult(0));
  }
  rewriter.replaceOp(op, results);
  ++numSplit;
}

struct KcSplitReductionsPass
    : public kcc::impl::KcSplitReductionsBase<KcSplitReductionsPass> {
  using KcSplitReductionsBase::KcSplitReductionsBase;

  void runOnOperation() override {
    if (parallelThreshold <= 0)
      return;
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (shouldSplit(op, parallelThreshold))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      split(rewriter, op);
  }
};

} // namespace
