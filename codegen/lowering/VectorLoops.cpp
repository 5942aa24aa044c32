//===- VectorLoops.cpp - linalg on buffers to loops, innermost dim as vectors //
//
// The loop nests kc-lower-loops and kc-fuse-loops emit reach LLVM as plain
// loads and stores between buffers it cannot tell apart (they are slices of
// one arena). A short innermost loop (16 channels) is fully unrolled before
// the loop vectorizer runs, and the SLP vectorizer, which has no runtime
// overlap check, leaves it scalar. So where the innermost dimension is
// parallel and every operand either runs along it contiguously or does not
// depend on it, the nest is emitted with that dimension as vector operations:
// a vector load per operand (a broadcast for the others), the body's
// arith/math ops on vectors, a vector store per result. Lanes are
// independent iterations, so results are bit-identical to the scalar loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/LoweringUtils.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace kcc {
namespace codegen {

namespace {

/// bf16 too: mixed-precision loops load and store it and compute in f32
/// (kc-widen-bf16); kc-expand-bf16 turns the vector casts into integer ops.
bool isVectorElement(Type t) {
  return t.isF32() || t.isF64() || t.isBF16() || t.isInteger(32) ||
         t.isInteger(64) || t.isInteger(1);
}

/// The vector width the innermost dimension of `op` runs at, or 0 when it
/// must stay scalar.
int64_t innermostVectorWidth(linalg::GenericOp op) {
  unsigned n = op.getNumLoops();
  if (!op.hasPureBufferSemantics() || n == 0 ||
      op.getIteratorTypesArray()[n - 1] != utils::IteratorType::parallel)
    return 0;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return 0;
  int64_t width = 0;
  for (int64_t w : {16, 8, 4})
    if (ranges[n - 1] % w == 0) {
      width = w;
      break;
    }
  if (!width)
    return 0;
  AffineExpr inner = getAffineDimExpr(n - 1, op.getContext());
  for (OpOperand &operand : op->getOpOperands()) {
    Type type = operand.get().getType();
    auto memref = dyn_cast<MemRefType>(type);
    // i1 buffers hold a byte per element; a vector of i1 is bits.
    Type element = memref ? memref.getElementType() : type;
    if (!isVectorElement(element) || (memref && element.isInteger(1)))
      return 0;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isFunctionOfDim(n - 1)) {
      if (op.isDpsInit(&operand))
        return 0;
      continue;
    }
    // Along the innermost dim: the last index only, at unit stride.
    if (!memref || map.getResults().back() != inner ||
        llvm::any_of(map.getResults().drop_back(),
                     [&](AffineExpr e) { return e.isFunctionOfDim(n - 1); }))
      return 0;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(getStridesAndOffset(memref, strides, offset)) ||
        strides.back() != 1)
      return 0;
  }
  for (Operation &inner : op.getBody()->without_terminator()) {
    if (isa<arith::ConstantOp>(inner) &&
        isVectorElement(inner.getResult(0).getType()))
      continue;
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) ||
        inner.getNumRegions() != 0 ||
        !OpTrait::hasElementwiseMappableTraits(&inner) ||
        llvm::any_of(inner.getResultTypes(),
                     [](Type t) { return !isVectorElement(t); }))
      return 0;
  }
  return width;
}

/// Emits `op` as loops whose innermost dimension steps by `width` lanes.
scf::ForOp lowerVectorized(RewriterBase &rewriter, linalg::GenericOp op,
                           int64_t width) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned n = ranges.size();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> ivs;
  scf::ForOp outer;
  for (unsigned d = 0; d < n; ++d) {
    Value lb = rewriter.create<arith::ConstantIndexOp>(loc, 0);
    Value ub = rewriter.create<arith::ConstantIndexOp>(loc, ranges[d]);
    Value step =
        rewriter.create<arith::ConstantIndexOp>(loc, d + 1 == n ? width : 1);
    auto loop = rewriter.create<scf::ForOp>(loc, lb, ub, step);
    if (!outer)
      outer = loop;
    ivs.push_back(loop.getInductionVar());
    rewriter.setInsertionPoint(loop.getBody()->getTerminator());
  }
  auto vectorOf = [&](Type t) { return VectorType::get({width}, t); };
  auto indices = [&](AffineMap map) {
    SmallVector<Value> result;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      result.push_back(
          rewriter.create<affine::AffineApplyOp>(loc, map.getSubMap({i}), ivs));
    return result;
  };
  DenseMap<Value, Value> splats; // values from outside the body
  auto splat = [&](Value v) {
    Value &s = splats[v];
    if (!s)
      s = rewriter.create<vector::BroadcastOp>(loc, vectorOf(v.getType()), v);
    return s;
  };

  Block &body = *op.getBody();
  IRMapping mapping;
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    if (arg.use_empty())
      continue;
    Value v = operand.get();
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!isa<MemRefType>(v.getType()))
      mapping.map(arg, splat(v));
    else if (map.isFunctionOfDim(n - 1))
      mapping.map(arg, rewriter.create<vector::LoadOp>(
                           loc, vectorOf(arg.getType()), v, indices(map)));
    else
      mapping.map(arg,
                  rewriter.create<vector::BroadcastOp>(
                      loc, vectorOf(arg.getType()),
                      rewriter.create<memref::LoadOp>(loc, v, indices(map))));
  }
  auto lookup = [&](Value v) {
    return mapping.contains(v) ? mapping.lookup(v) : splat(v);
  };
  for (Operation &inner : body.without_terminator()) {
    if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
      auto type = vectorOf(c.getType());
      mapping.map(c.getResult(),
                  rewriter.create<arith::ConstantOp>(
                      loc, type, DenseElementsAttr::get(type, c.getValue())));
      continue;
    }
    SmallVector<Value> operands;
    for (Value v : inner.getOperands())
      operands.push_back(lookup(v));
    SmallVector<Type> types;
    for (Type t : inner.getResultTypes())
      types.push_back(vectorOf(t));
    OperationState state(inner.getLoc(), inner.getName(), operands, types,
                         inner.getAttrs());
    Operation *vectorOp = rewriter.create(state);
    mapping.map(inner.getResults(), vectorOp->getResults());
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  for (auto [init, value] :
       llvm::zip(op.getDpsInitsMutable(), yield.getOperands()))
    rewriter.create<vector::StoreOp>(loc, lookup(value), init.get(),
                                     indices(op.getMatchingIndexingMap(&init)));
  rewriter.eraseOp(op);
  return outer;
}

} // namespace

FailureOr<scf::ForOp> lowerToLoopNest(RewriterBase &rewriter,
                                      linalg::LinalgOp op,
                                      bool keepOuterUnitStep) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    if (int64_t width = innermostVectorWidth(generic))
      if (!keepOuterUnitStep || generic.getNumLoops() > 1)
        return lowerVectorized(rewriter, generic, width);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::LinalgLoops> loops = linalg::linalgOpToLoops(rewriter, op);
  if (failed(loops))
    return failure();
  rewriter.eraseOp(op);
  return loops->empty() ? scf::ForOp() : cast<scf::ForOp>(loops->front());
}

} // namespace codegen
} // namespace kcc
