//===- ReuseBuffers.cpp - Elementwise ops write over a dying input --------===//
//
// kc-reuse-buffers: one-shot bufferization gives every linalg.generic on an
// empty tensor a fresh output buffer. When an elementwise op reads an input
// of the output's exact type for the last time, the output can take the
// input's buffer: each element is loaded before the same element is stored.
// The relu mask of a convolution's gradient is the case that matters: the
// masked gradient overwrites the unmasked one instead of needing a second
// activation-sized buffer, which lowers the step's peak memory (the arena
// planner can only share buffers whose lifetimes do not overlap; here they
// touch at exactly this op).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-reuse-buffers"

STATISTIC(numReused, "output buffers replaced by a dying input's buffer");

namespace kcc {
#define GEN_PASS_DEF_KCREUSEBUFFERS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

/// The position in `block` of the last op (or its ancestor) using `v` or a
/// view of it; -1 when a use is outside the block or escapes.
int64_t lastUse(Value v, Block &block,
                const DenseMap<Operation *, int64_t> &order) {
  int64_t last = -1;
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top || user->hasTrait<OpTrait::IsTerminator>())
        return INT64_MAX;
      last = std::max(last, order.lookup(top));
      // Views, casts and extracted pointers (and the integers they
      // become) carry the address: follow every non-float result.
      for (Value r : user->getResults())
        if (!isa<FloatType>(r.getType()))
          work.push_back(r);
    }
  }
  return last;
}

/// Whether a buffer is touched before position `here`: by an op other than
/// the views and pointer casts that only carry its address.
bool touchedBefore(Value v, Block &block,
                   const DenseMap<Operation *, int64_t> &order, int64_t here) {
  SmallVector<Value> work = {v};
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (Operation *user : cur.getUsers()) {
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
              memref::ExtractAlignedPointerAsIndexOp, arith::IndexCastOp,
              LLVM::IntToPtrOp>(user)) {
        work.push_back(user->getResult(0));
        continue;
      }
      Operation *top = block.findAncestorOpInBlock(*user);
      if (!top || order.lookup(top) < here)
        return true;
    }
  }
  return false;
}

/// The allocation behind `v` through reshapes and casts (same bytes).
memref::AllocOp rootAlloc(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(def))
      return alloc;
    if (!isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
            def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

struct KcReuseBuffersPass
    : public kcc::impl::KcReuseBuffersBase<KcReuseBuffersPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        runOnBlock(func.getBody().front());
  }

  void runOnBlock(Block &block) {
    DenseMap<Operation *, int64_t> order;
    int64_t n = 0;
    for (Operation &op : block)
      order[&op] = n++;
    for (auto call : llvm::make_early_inc_range(block.getOps<func::CallOp>())) {
      // A max-pool gradient whose windows tile x may write over x (see
      // kernels::maxPool2dGrad).
      if (!kcc::codegen::isTiledMaxPoolGrad(call))
        continue;
      Value in = kcc::codegen::pointerMemref(call.getOperand(0));
      Value outMemref = kcc::codegen::pointerMemref(call.getOperand(2));
      memref::AllocOp src = in ? rootAlloc(in) : memref::AllocOp();
      auto out = outMemref ? outMemref.getDefiningOp<memref::AllocOp>()
                           : memref::AllocOp();
      int64_t here = order.lookup(call);
      if (!src || !out || src == out || src.getType() != out.getType() ||
          lastUse(src, block, order) != here ||
          touchedBefore(out.getResult(), block, order, here))
        continue;
      out.getResult().replaceAllUsesWith(src.getResult());
      out.erase();
      ++numReused;
    }
    for (auto generic :
         llvm::make_early_inc_range(block.getOps<linalg::GenericOp>())) {
      if (!generic.hasPureBufferSemantics() ||
          generic.getNumLoops() != generic.getNumParallelLoops())
        continue;
      int64_t here = order.lookup(generic);
      for (OpOperand &init : generic.getDpsInitsMutable()) {
        auto out = init.get().getDefiningOp<memref::AllocOp>();
        // The output: a fresh allocation, first touched here, its old
        // contents never read.
        if (!out || !generic.getMatchingIndexingMap(&init).isIdentity() ||
            !generic.getMatchingBlockArgument(&init).use_empty())
          continue;
        bool usedBefore = llvm::any_of(out->getUsers(), [&](Operation *u) {
          Operation *top = block.findAncestorOpInBlock(*u);
          return top && order.lookup(top) < here;
        });
        if (usedBefore)
          continue;
        for (OpOperand *in : generic.getDpsInputOperands()) {
          auto src = in->get().getDefiningOp<memref::AllocOp>();
          if (!src || src == out || src.getType() != out.getType() ||
              !generic.getMatchingIndexingMap(in).isIdentity() ||
              lastUse(src, block, order) != here)
            continue;
          // Another output of this op must not already be this buffer.
          if (llvm::any_of(generic.getDpsInits(),
                           [&](Value v) { return v == src.getResult(); }))
            continue;
          out.getResult().replaceAllUsesWith(src.getResult());
          out.erase();
          ++numReused;
          break;
        }
      }
    }
  }
};

} // namespace
