//===- LowerLoops.cpp - linalg on buffers to serial or parallel loops -----===//
//
// kc-lower-loops: every linalg op becomes a loop nest; those with enough
// work become scf.parallel over their parallel dimensions (which
// convert-scf-to-openmp then turns into an OpenMP team over the cores), the
// rest stay serial scf.for nests. Waking a team costs microseconds, so a
// bias add of ten elements must not pay it while an optimizer update over
// 100k parameters should.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "kc-lower-loops"

STATISTIC(numParallelNests, "linalg ops lowered to parallel loops");
STATISTIC(numSerialNests, "linalg ops lowered to serial loops");

namespace kcc {
#define GEN_PASS_DEF_KCLOWERLOOPS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
namespace kc = kcc::kc;

namespace {

/// Iterations of the whole nest and of its parallel dimensions, or -1 when
/// a range is dynamic.
std::pair<int64_t, int64_t> work(linalg::LinalgOp op) {
  int64_t total = 1, parallel = 1;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  for (auto [range, it] : llvm::zip(ranges, iterators)) {
    if (ShapedType::isDynamic(range))
      return {-1, -1};
    total *= range;
    if (it == utils::IteratorType::parallel)
      parallel *= range;
  }
  return {total, parallel};
}

/// Turns the outermost loop of a nest into a one-dimensional scf.parallel.
/// Only the outermost: an n-dimensional parallel loop becomes one collapsed
/// OpenMP loop whose every iteration recovers its n indices by division,
/// which keeps LLVM from vectorizing the innermost (contiguous) dimension.
void parallelizeOutermost(IRRewriter &rewriter, scf::ForOp outer) {
  rewriter.setInsertionPoint(outer);
  auto par = rewriter.create<scf::ParallelOp>(
      outer.getLoc(), ValueRange{outer.getLowerBound()},
      ValueRange{outer.getUpperBound()}, ValueRange{outer.getStep()});
  outer.getInductionVar().replaceAllUsesWith(par.getInductionVars()[0]);
  Block *from = outer.getBody();
  rewriter.eraseOp(from->getTerminator());
  Block *to = par.getBody();
  to->getOperations().splice(to->getTerminator()->getIterator(),
                             from->getOperations());
  rewriter.eraseOp(outer);
}

struct KcLowerLoopsPass
    : public kcc::impl::KcLowerLoopsBase<KcLowerLoopsPass> {
  using KcLowerLoopsBase::KcLowerLoopsBase;

  void runOnOperation() override {
    // Fusion groups (kc-fuse-loops) whose iterations are independent.
    SmallVector<scf::ForOp> groups;
    getOperation()->walk([&](scf::ForOp loop) {
      if (kc::isParallelLoop(loop))
        groups.push_back(loop);
    });
    IRRewriter groupRewriter(&getContext());
    for (scf::ForOp loop : groups)
      if (parallelThreshold > 0)
        parallelizeOutermost(groupRewriter, loop);
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      auto [total, parallel] = work(op);
      // Only outermost nests: a team inside a team would oversubscribe.
      bool nested = op->getParentOfType<scf::ParallelOp>() != nullptr;
      // All-parallel nests only: an outer reduction would put the team
      // inside a serial loop (one fork per iteration), and an inner one
      // would need a combining step the lowering does not emit.
      bool allParallel = op.getNumLoops() > 0 && total == parallel;
      bool par = parallelThreshold > 0 && total >= parallelThreshold &&
                 allParallel && !nested;
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op->emitError("cannot lower to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      if (par && !loops->empty())
        parallelizeOutermost(rewriter, cast<scf::ForOp>(loops->front()));
      ++(par ? numParallelNests : numSerialNests);
    }
  }
};

} // namespace
