//===- MarkInPlace.cpp - Which results may share their argument's buffer --===//
//
// kc-mark-in-place: a training step returns every parameter, optimizer slot
// and the step counter updated. If the caller passes the argument's own
// buffer as the result's out-param, the step updates them in place: one set
// of weights and state instead of two. That is correct only when nothing
// reads the old value after the new one is written, which this pass proves
// on the bufferized function (out-params are arguments by now):
//
// - exactly one top-level op writes the out-param, and nothing after it
//   touches the argument;
// - inside that op, the only op touching either buffer is one elementwise
//   linalg.generic that reads the argument and writes the out-param at the
//   same element (same indexing map, equivalent views), so each element is
//   read before it is overwritten.
//
// Proven pairs go into `kc.in_place` (result index, argument index, ...);
// the runtime aliases exactly those.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-mark-in-place"

STATISTIC(numInPlace, "results proven safe to update their argument in place");

namespace kcc {
#define GEN_PASS_DEF_KCMARKINPLACE
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
namespace kc = kcc::kc;

namespace {

bool isView(Operation *op) {
  return isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp,
             memref::SubViewOp, memref::ReinterpretCastOp>(op);
}

/// Every use of `root` and of the views taken of it.
void collectUses(Value root, SmallVectorImpl<OpOperand *> &uses) {
  SmallVector<Value> work = {root};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      if (isView(use.getOwner()))
        work.push_back(use.getOwner()->getResult(0));
      else
        uses.push_back(&use);
    }
  }
}

/// `x` (a view chain ending at `rootX`) and `y` (ending at `rootY`) view
/// their roots identically: the same view ops with the same attributes and
/// the same other operands.
bool sameView(Value x, Value y, Value rootX, Value rootY) {
  if (x == rootX || y == rootY)
    return x == rootX && y == rootY;
  Operation *a = x.getDefiningOp(), *b = y.getDefiningOp();
  if (!a || !b || a->getName() != b->getName() ||
      a->getAttrDictionary() != b->getAttrDictionary() ||
      a->getNumOperands() != b->getNumOperands() || !isView(a))
    return false;
  for (unsigned i = 1; i < a->getNumOperands(); ++i)
    if (a->getOperand(i) != b->getOperand(i))
      return false;
  return sameView(a->getOperand(0), b->getOperand(0), rootX, rootY);
}

/// The proof for one (argument, out-param) pair.
bool provenInPlace(Block &block, Value arg, Value out) {
  SmallVector<OpOperand *> argUses, outUses;
  collectUses(arg, argUses);
  collectUses(out, outUses);
  if (outUses.empty())
    return false;
  Operation *writer = block.findAncestorOpInBlock(*outUses.front()->getOwner());
  if (!writer)
    return false;
  for (OpOperand *use : outUses)
    if (block.findAncestorOpInBlock(*use->getOwner()) != writer)
      return false;
  for (OpOperand *use : argUses) {
    Operation *top = block.findAncestorOpInBlock(*use->getOwner());
    if (!top || (top != writer && writer->isBeforeInBlock(top)))
      return false;
  }
  // Inside the writer: one elementwise generic touches both buffers.
  auto generic = dyn_cast<linalg::GenericOp>(outUses.front()->getOwner());
  if (!generic || generic.getNumLoops() != generic.getNumParallelLoops())
    return false;
  OpOperand *written = nullptr, *read = nullptr;
  for (OpOperand *use : outUses) {
    if (use->getOwner() != generic || !generic.isDpsInit(use) || written)
      return false;
    written = use;
  }
  for (OpOperand *use : argUses) {
    if (block.findAncestorOpInBlock(*use->getOwner()) != writer)
      continue; // before the writer: read while the old value is intact
    if (use->getOwner() != generic || generic.isDpsInit(use) || read)
      return false;
    read = use;
  }
  if (!read)
    return true; // the writer does not read the argument at all
  return generic.getMatchingIndexingMap(read) ==
             generic.getMatchingIndexingMap(written) &&
         sameView(read->get(), written->get(), arg, out);
}

struct KcMarkInPlacePass
    : public kcc::impl::KcMarkInPlaceBase<KcMarkInPlacePass> {
  using KcMarkInPlaceBase::KcMarkInPlaceBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      std::optional<ArrayRef<int64_t>> pairs = kc::getUpdateCandidates(func);
      std::optional<int64_t> numInputs =
          kc::getCount(func, kc::attr::kNumInputs);
      if (!pairs || !numInputs || func.isExternal() ||
          !func.getBody().hasOneBlock())
        continue;
      Block &block = func.getBody().front();
      SmallVector<int64_t> proven;
      ArrayRef<int64_t> p = *pairs;
      for (size_t i = 0; i + 1 < p.size(); i += 2) {
        int64_t outIndex = *numInputs + p[i];
        if (outIndex >= func.getNumArguments())
          continue;
        Value arg = func.getArgument(p[i + 1]),
              out = func.getArgument(outIndex);
        if (provenInPlace(block, arg, out)) {
          proven.append({p[i], p[i + 1]});
          ++numInPlace;
          if (apply)
            out.replaceAllUsesWith(arg);
        }
      }
      kc::setInPlacePairs(func, proven);
    }
  }
};

} // namespace
