//===- GpuLoops.cpp - Shape loop nests for the GPU mapping ----------------===//
//
// kc-cuda-prepare-parallel (before linalg becomes loops) and
// kc-cuda-tile-parallel-loops (after): together they make every linalg op
// one kernel launch with a sensible grid, and leave no loop on the host.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

#define DEBUG_TYPE "kc-cuda-gpu-loops"

namespace kcc {
#define GEN_PASS_DEF_KCCUDAPREPAREPARALLEL
#define GEN_PASS_DEF_KCCUDATILEPARALLELLOOPS
#include "codegen/cuda/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

struct KcCudaPrepareParallelPass
    : public kcc::impl::KcCudaPrepareParallelBase<KcCudaPrepareParallelPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());

    // Parallel dimensions first, each group in its original order.
    SmallVector<linalg::GenericOp> generics;
    func.walk([&](linalg::GenericOp g) { generics.push_back(g); });
    for (linalg::GenericOp g : generics) {
      SmallVector<unsigned> perm;
      auto iters = g.getIteratorTypesArray();
      for (unsigned i = 0; i < iters.size(); ++i)
        if (linalg::isParallelIterator(iters[i]))
          perm.push_back(i);
      for (unsigned i = 0; i < iters.size(); ++i)
        if (!linalg::isParallelIterator(iters[i]))
          perm.push_back(i);
      bool identity = llvm::all_of(
          llvm::enumerate(perm), [](auto p) { return p.index() == p.value(); });
      if (identity)
        continue;
      rewriter.setInsertionPoint(g);
      if (failed(linalg::interchangeGenericOp(rewriter, g, perm))) {
        g.emitOpError("could not put the parallel dimensions first");
        return signalPassFailure();
      }
    }

    // A structured op without parallel dimensions gets a one-iteration
    // parallel loop around it: a one-thread kernel instead of host code
    // reading device memory.
    SmallVector<linalg::LinalgOp> scalarOps;
    func.walk([&](linalg::LinalgOp op) {
      if (op.getNumParallelLoops() == 0 &&
          !op->getParentOfType<scf::ParallelOp>())
        scalarOps.push_back(op);
    });
    for (linalg::LinalgOp op : scalarOps) {
      rewriter.setInsertionPoint(op);
      Location loc = op.getLoc();
      Value c0 = rewriter.create<arith::ConstantIndexOp>(loc, 0);
      Value c1 = rewriter.create<arith::ConstantIndexOp>(loc, 1);
      auto par = rewriter.create<scf::ParallelOp>(
          loc, ValueRange{c0}, ValueRange{c1}, ValueRange{c1});
      op->moveBefore(par.getBody()->getTerminator());
    }
  }
};

struct KcCudaTileParallelLoopsPass
    : public kcc::impl::KcCudaTileParallelLoopsBase<
          KcCudaTileParallelLoopsPass> {
  using KcCudaTileParallelLoopsBase::KcCudaTileParallelLoopsBase;

  void runOnOperation() override {
    if (blockSize < 1) {
      getOperation().emitError("block-size must be positive, got ")
          << static_cast<int64_t>(blockSize);
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>())
        outermost.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermost) {
      // Collapsing needs constant bounds; shapes are static, so anything else
      // is a bug upstream of this pass.
      SmallVector<Value> bounds(op.getLowerBound());
      llvm::append_range(bounds, op.getUpperBound());
      llvm::append_range(bounds, op.getStep());
      for (Value v : bounds)
        if (!getConstantIntValue(v)) {
          op.emitOpError("expects static loop bounds for the GPU mapping");
          return signalPassFailure();
        }
      if (op.getNumLoops() > 1) {
        std::vector<unsigned> all(op.getNumLoops());
        std::iota(all.begin(), all.end(), 0u);
        rewriter.setInsertionPoint(op);
        // collapseParallelLoops replaces `op` with a fresh loop in place.
        Operation *prev = op->getPrevNode();
        Block *block = op->getBlock();
        collapseParallelLoops(rewriter, op, {all});
        Operation *next = prev ? prev->getNextNode() : &block->front();
        while (next && !isa<scf::ParallelOp>(next))
          next = next->getNextNode();
        op = cast<scf::ParallelOp>(next);
      }
      int64_t trip = (*getConstantIntValue(op.getUpperBound()[0]) -
                      *getConstantIntValue(op.getLowerBound()[0]) +
                      *getConstantIntValue(op.getStep()[0]) - 1) /
                     *getConstantIntValue(op.getStep()[0]);
      // Small loops keep one block of exactly their size.
      int64_t tile = std::max<int64_t>(1, std::min<int64_t>(blockSize, trip));
      scf::tileParallelLoop(op, {tile}, /*noMinMaxBounds=*/true);
    }
  }
};

} // namespace
