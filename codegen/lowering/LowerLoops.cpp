//===- LowerLoops.cpp - linalg on buffers to serial or parallel loops -----===//
//
// kc-lower-loops: every linalg op becomes a loop nest; those with enough
// work become scf.parallel over their outermost loop (which
// convert-scf-to-openmp then turns into an OpenMP team over the cores), the
// rest stay serial scf.for nests. Waking a team costs microseconds, so a
// bias add of ten elements must not pay it while an optimizer update over
// 100k parameters should.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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

/// Iterations of the whole nest, or -1 when a range is dynamic.
int64_t work(linalg::LinalgOp op) {
  int64_t total = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return -1;
    total *= range;
  }
  return total;
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

struct KcLowerLoopsPass : public kcc::impl::KcLowerLoopsBase<KcLowerLoopsPass> {
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
      int64_t total = work(op);
      // Only outermost nests: a team inside a team would oversubscribe.
      bool nested = op->getParentOfType<scf::ParallelOp>() != nullptr;
      // The outermost loop only, and only when its iterations write apart:
      // an outer reduction would need a combining step the lowering does not
      // emit (kc-split-reductions makes the big ones outer-parallel), while
      // inner reductions run per thread.
      bool par = parallelThreshold > 0 && total >= parallelThreshold &&
                 kcc::codegen::isOuterLoopIndependent(op) && !nested;
      Location loc = op.getLoc();
      FailureOr<scf::ForOp> outer = kcc::codegen::lowerToLoopNest(
          rewriter, op, /*keepOuterUnitStep=*/false);
      if (failed(outer)) {
        emitError(loc, "cannot lower to loops");
        return signalPassFailure();
      }
      if (par && *outer)
        parallelizeOutermost(rewriter, *outer);
      ++(par ? numParallelNests : numSerialNests);
    }
  }
};

} // namespace
