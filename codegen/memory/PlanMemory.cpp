//===- PlanMemory.cpp - One static arena for every intermediate buffer ----===//
//
// kc-plan-memory: after bufferization and buffer-results-to-out-params, every
// statically shaped memref.alloc of a function's entry block gets an offset
// in one i8 arena and becomes a memref.view of it. Offsets come from the
// buffers' live intervals (first to last use in the block, aliases
// included), placed greedily by decreasing size into the best-fitting gap
// (the TFLite arena planner's "greedy by size", XLA's heap simulator): two
// buffers share bytes only when their intervals are disjoint.
//
// The arena is either one allocation per call (freed by the deallocation
// pipeline that runs next) or, with `arena-arg`, a trailing
// `memref<Nxi8>` argument the caller provides once, so a step allocates
// nothing.
//
// The memory phase (codegen/memory/). In: linalg on tensors after fusion.
// Out: linalg on buffers whose results are the caller's out-params and
// whose intermediates are views of one static arena: one-shot bufferization
// (kc-one-shot-bufferize), one allocation per result (kc-prepare-out-params),
// buffers reused in place (kc-reuse-buffers, kc-mark-in-place), the arena
// (this pass), and the frees of what is left (kc-buffer-deallocation).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/memory/MemoryPlan.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <map>

#define DEBUG_TYPE "kc-plan-memory"

STATISTIC(numPlannedBuffers, "buffers placed in an arena");
STATISTIC(numArenaBytes, "arena bytes planned");
STATISTIC(numSavedBytes, "bytes saved by sharing arena space");

namespace kcc {
#define GEN_PASS_DEF_KCPLANMEMORY
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

/// Bytes of a statically shaped memref, or -1.
int64_t staticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return -1;
  // Whole bytes only: sub-byte types (i1) keep their own allocation rather
  // than depend on how the LLVM lowering pads them.
  if (!type.getElementType().isIntOrFloat())
    return -1;
  unsigned bits = type.getElementTypeBitWidth();
  if (bits == 0 || bits % 8 != 0)
    return -1;
  return type.getNumElements() * (bits / 8);
}

/// The position of `op`'s ancestor in `block`, or -1 when it has none.
int64_t positionIn(Operation *op, Block &block,
                   const DenseMap<Operation *, int64_t> &order) {
  Operation *ancestor = block.findAncestorOpInBlock(*op);
  if (!ancestor)
    return -1;
  return order.lookup(ancestor);
}

/// The live interval of `alloc` (inclusive op positions in its block), or
/// std::nullopt when the buffer escapes: returned, yielded out of a region
/// or used outside the block, so its lifetime is not the block's to decide.
std::optional<std::pair<int64_t, int64_t>>
liveInterval(memref::AllocOp alloc, const DenseMap<Operation *, int64_t> &order,
             SmallVectorImpl<Operation *> &deallocs) {
  Block &block = *alloc->getBlock();
  int64_t first = INT64_MAX, last = -1;
  SmallVector<Value> work = {alloc.getResult()};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user)) {
        deallocs.push_back(user);
        continue;
      }
      if (isa<func::ReturnOp>(user) || user->hasTrait<OpTrait::IsTerminator>())
        return std::nullopt;
      int64_t pos = positionIn(user, block, order);
      if (pos < 0)
        return std::nullopt;
      first = std::min(first, pos);
      last = std::max(last, pos);
      // Anything derived from the buffer (views, casts, extracted pointers
      // and the integers they become) keeps it alive: follow every result
      // that could carry an address. Conservative, never unsafe.
      for (Value r : user->getResults())
        if (!isa<FloatType>(r.getType()))
          work.push_back(r);
    }
  }
  if (last < 0) // never used: it still needs no space
    first = last = order.lookup(alloc);
  return std::make_pair(first, last);
}

/// Greedy by size, best fit: places every buffer at the lowest-waste offset
/// among those free for its whole interval. Returns the arena size.
int64_t assignOffsets(MutableArrayRef<PlannedBuffer> buffers,
                      int64_t alignment) {
  SmallVector<PlannedBuffer *> bySize;
  for (PlannedBuffer &b : buffers)
    bySize.push_back(&b);
  std::stable_sort(bySize.begin(), bySize.end(),
                   [](PlannedBuffer *a, PlannedBuffer *b) {
                     if (a->bytes != b->bytes)
                       return a->bytes > b->bytes;
                     return a->firstUse < b->firstUse;
                   });
  auto alignUp = [&](int64_t x) {
    return (x + alignment - 1) / alignment * alignment;
  };
  SmallVector<PlannedBuffer *> placed;
  int64_t arena = 0;
  for (PlannedBuffer *buf : bySize) {
    SmallVector<PlannedBuffer *> live;
    for (PlannedBuffer *p : placed)
      if (p->firstUse <= buf->lastUse && buf->firstUse <= p->lastUse)
        live.push_back(p);
    llvm::sort(live, [](PlannedBuffer *a, PlannedBuffer *b) {
      return a->offset < b->offset;
    });
    int64_t size = alignUp(buf->bytes);
    int64_t best = -1, bestGap = INT64_MAX, cursor = 0;
    for (PlannedBuffer *p : live) {
      int64_t gap = p->offset - cursor;
      if (gap >= size && gap < bestGap)
        best = cursor, bestGap = gap;
      cursor = std::max(cursor, alignUp(p->offset + p->bytes));
    }
    buf->offset = best >= 0 ? best : cursor;
    arena = std::max(arena, alignUp(buf->offset + buf->bytes));
    placed.push_back(buf);
  }
  return arena;
}

/// The most bytes live at any one position (aligned sizes): no placement can
/// do better.
int64_t lowerBound(ArrayRef<PlannedBuffer> buffers, int64_t alignment) {
  std::map<int64_t, int64_t> delta;
  for (const PlannedBuffer &b : buffers) {
    int64_t size = (b.bytes + alignment - 1) / alignment * alignment;
    delta[b.firstUse] += size;
    delta[b.lastUse + 1] -= size;
  }
  int64_t live = 0, peak = 0;
  for (auto &[pos, d] : delta)
    peak = std::max(peak, live += d);
  return peak;
}

/// Library calls take `extract_aligned_pointer_as_index` of their buffers.
/// expand-strided-metadata forwards that op through view-like ops to the
/// underlying allocation, which for a memref.view drops the byte shift (it
/// lives in the view's aligned pointer, not in its offset). So every pointer
/// extracted from `view` (directly or through reshapes and casts, which
/// keep the address) is rewritten here as the arena's pointer plus the
/// offset: the same address, with nothing left to forward. Subviews keep
/// their source's aligned pointer too (their offset is in the descriptor),
/// so a pointer taken through one (the part of a packed result a library
/// call reads) is rebased the same way.
void rebaseExtractedPointers(OpBuilder &b, Value view, Value arena,
                             int64_t offset) {
  SmallVector<Value> work = {view};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
      if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp, memref::CastOp,
              memref::SubViewOp>(user)) {
        work.push_back(user->getResult(0));
        continue;
      }
      auto extract = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user);
      if (!extract)
        continue;
      b.setInsertionPoint(extract);
      Location loc = extract.getLoc();
      Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, arena);
      Value shifted = b.create<arith::AddIOp>(
          loc, base, b.create<arith::ConstantIndexOp>(loc, offset));
      extract.replaceAllUsesWith(shifted);
      extract.erase();
    }
  }
}

struct KcPlanMemoryPass : public kcc::impl::KcPlanMemoryBase<KcPlanMemoryPass> {
  using KcPlanMemoryBase::KcPlanMemoryBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && func.getBody().hasOneBlock())
        planFunction(func);
  }

  void planFunction(func::FuncOp func) {
    Block &block = func.getBody().front();
    DenseMap<Operation *, int64_t> order;
    int64_t n = 0;
    for (Operation &op : block)
      order[&op] = n++;

    MemoryPlanReport report;
    SmallVector<memref::AllocOp> allocs;
    SmallVector<Operation *> deallocs;
    for (auto alloc : block.getOps<memref::AllocOp>()) {
      int64_t bytes = staticBytes(alloc.getType());
      if (bytes < 0 || !alloc.getDynamicSizes().empty() ||
          !alloc.getSymbolOperands().empty())
        continue;
      SmallVector<Operation *> own;
      auto interval = liveInterval(alloc, order, own);
      if (!interval)
        continue;
      deallocs.append(own);
      report.buffers.push_back(
          {bytes, interval->first, interval->second, /*offset=*/0});
      allocs.push_back(alloc);
    }
    if (allocs.empty())
      return;

    report.alignment = alignment;
    report.arenaBytes = assignOffsets(report.buffers, alignment);
    report.lowerBoundBytes = lowerBound(report.buffers, alignment);
    for (const PlannedBuffer &b : report.buffers)
      report.sumBytes += (b.bytes + alignment - 1) / alignment * alignment;

    // The arena: a trailing argument, or one allocation at the top.
    OpBuilder b(func.getContext());
    auto arenaType = MemRefType::get({std::max<int64_t>(report.arenaBytes, 1)},
                                     b.getI8Type());
    Value arena;
    if (arenaArg) {
      unsigned index = func.getNumArguments();
      func.insertArgument(index, arenaType, b.getDictionaryAttr({}),
                          func.getLoc());
      kc::setArenaArg(func, index);
      arena = func.getArgument(index);
    } else {
      b.setInsertionPointToStart(&block);
      arena = b.create<memref::AllocOp>(func.getLoc(), arenaType,
                                        b.getI64IntegerAttr(alignment));
    }
    for (auto [alloc, buf] : llvm::zip(allocs, report.buffers)) {
      b.setInsertionPoint(alloc);
      Value offset =
          b.create<arith::ConstantIndexOp>(alloc.getLoc(), buf.offset);
      Value view = b.create<memref::ViewOp>(alloc.getLoc(), alloc.getType(),
                                            arena, offset, ValueRange{});
      alloc.replaceAllUsesWith(view);
      alloc.erase();
      rebaseExtractedPointers(b, view, arena, buf.offset);
    }
    for (Operation *d : deallocs)
      d->erase();

    report.numBuffers = report.buffers.size();
    writeMemoryPlan(func, report);
    numPlannedBuffers += report.buffers.size();
    numArenaBytes += report.arenaBytes;
    numSavedBytes += report.sumBytes - report.arenaBytes;
    LLVM_DEBUG(llvm::dbgs()
               << "@" << func.getSymName() << ": " << report.buffers.size()
               << " buffers, arena " << report.arenaBytes << " B, lower bound "
               << report.lowerBoundBytes << " B, sum " << report.sumBytes
               << " B\n");
    if (remarks)
      func.emitRemark() << "arena " << report.arenaBytes << " B for "
                        << report.buffers.size() << " buffers (lower bound "
                        << report.lowerBoundBytes << " B, unshared "
                        << report.sumBytes << " B, saved "
                        << report.sumBytes - report.arenaBytes << " B)";
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// The report on the function
//===----------------------------------------------------------------------===//

llvm::json::Object MemoryPlanReport::toJSON() const {
  return llvm::json::Object{
      {"arena_bytes", arenaBytes}, {"lower_bound_bytes", lowerBoundBytes},
      {"sum_bytes", sumBytes},     {"saved_bytes", savedBytes()},
      {"buffers", numBuffers},     {"alignment", alignment}};
}

void kcc::writeMemoryPlan(Operation *func, const MemoryPlanReport &report) {
  kc::setCount(func, kc::attr::kArenaBytes, report.arenaBytes);
  kc::setCount(func, kc::attr::kArenaLowerBound, report.lowerBoundBytes);
  kc::setCount(func, kc::attr::kArenaSum, report.sumBytes);
  kc::setCount(func, kc::attr::kArenaBuffers,
               static_cast<int64_t>(report.buffers.size()));
}

std::optional<MemoryPlanReport> kcc::readMemoryPlan(Operation *func) {
  auto get = [&](StringRef name) { return kc::getCount(func, name); };
  std::optional<int64_t> arena = get(kc::attr::kArenaBytes);
  if (!arena)
    return std::nullopt;
  MemoryPlanReport r;
  r.arenaBytes = *arena;
  r.lowerBoundBytes = get(kc::attr::kArenaLowerBound).value_or(0);
  r.sumBytes = get(kc::attr::kArenaSum).value_or(0);
  r.numBuffers = get(kc::attr::kArenaBuffers).value_or(0);
  return r;
}
