//===- GradientBuckets.cpp - Data-parallel gradients in buckets -----------===//

#include "passes/GradientBuckets.h"

#include "ir/KcDialect.h"

#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;

namespace {

struct Bucket {
  llvm::SmallVector<unsigned> members; ///< indices into the gradients
  int64_t bytes = 0;
};

/// Whether `a` is defined before `b` in their block (arguments first).
bool definedBefore(Value a, Value b) {
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y)
    return !x && y;
  return x != y && x->isBeforeInBlock(y);
}

RankedTensorType flatType(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return RankedTensorType::get({t.getNumElements()}, t.getElementType());
}

int64_t byteSize(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getNumElements() *
         static_cast<int64_t>((t.getElementTypeBitWidth() + 7) / 8);
}

} // namespace

void kcc::reduceGradientsInBuckets(OpBuilder &b, Location loc,
                                   llvm::MutableArrayRef<Value> grads,
                                   int64_t bucketBytes) {
  if (grads.empty())
    return;
  llvm::SmallVector<unsigned> order(grads.size());
  std::iota(order.begin(), order.end(), 0u);
  llvm::stable_sort(order, [&](unsigned x, unsigned y) {
    return definedBefore(grads[x], grads[y]);
  });

  // One bucket per element type: a bucket is one tensor.
  llvm::SmallVector<Bucket> buckets;
  llvm::SmallVector<Bucket> open;
  for (unsigned k : order) {
    Type elt = cast<RankedTensorType>(grads[k].getType()).getElementType();
    auto it = llvm::find_if(open, [&](const Bucket &bk) {
      return cast<RankedTensorType>(grads[bk.members[0]].getType())
                 .getElementType() == elt;
    });
    int64_t bytes = byteSize(grads[k]);
    if (it != open.end() && it->bytes + bytes > bucketBytes) {
      buckets.push_back(std::move(*it));
      open.erase(it);
      it = open.end();
    }
    if (it == open.end()) {
      open.emplace_back();
      it = std::prev(open.end());
    }
    it->members.push_back(k);
    it->bytes += bytes;
  }
  llvm::append_range(buckets, std::move(open));

  OpBuilder::InsertPoint end = b.saveInsertionPoint();
  Block *block = end.getBlock();
  llvm::SmallVector<Value> started;
  for (const Bucket &bk : buckets) {
    // Right after the bucket's last gradient, so it overlaps the backward
    // that follows.
    Value last = grads[bk.members.back()];
    for (unsigned k : bk.members)
      if (definedBefore(last, grads[k]))
        last = grads[k];
    if (Operation *def = last.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(block);
    llvm::SmallVector<Value> flat;
    int64_t n = 0;
    for (unsigned k : bk.members) {
      RankedTensorType ft = flatType(grads[k]);
      n += ft.getNumElements();
      flat.push_back(ft == grads[k].getType()
                         ? grads[k]
                         : b.create<kc::ReshapeOp>(loc, ft, grads[k]));
    }
    auto bucketType = RankedTensorType::get(
        {n}, cast<RankedTensorType>(flat[0].getType()).getElementType());
    Value packed = flat.size() == 1
                       ? flat[0]
                       : b.create<kc::ConcatOp>(loc, bucketType, flat,
                                                b.getI64IntegerAttr(0));
    started.push_back(b.create<kc::AllReduceStartOp>(loc, bucketType, packed,
                                                     b.getStringAttr("mean")));
  }

  b.restoreInsertionPoint(end);
  for (auto [bk, start] : llvm::zip(buckets, started)) {
    Value reduced = b.create<kc::AllReduceWaitOp>(loc, start.getType(), start,
                                                  b.getStringAttr("mean"));
    int64_t offset = 0;
    for (unsigned k : bk.members) {
      auto type = cast<RankedTensorType>(grads[k].getType());
      int64_t size = type.getNumElements();
      Value g = reduced;
      if (bk.members.size() > 1)
        g = b.create<kc::SliceOp>(loc, flatType(grads[k]), reduced,
                                  b.getDenseI64ArrayAttr({offset}),
                                  b.getDenseI64ArrayAttr({offset + size}),
                                  b.getDenseI64ArrayAttr({1}));
      if (g.getType() != type)
        g = b.create<kc::ReshapeOp>(loc, type, g);
      grads[k] = g;
      offset += size;
    }
  }
}
