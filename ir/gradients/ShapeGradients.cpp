//===- ShapeGradients.cpp - Gradient rules of kc layout and reduction ops -===//
//
// Layout ops move gradients back to where their elements came from
// (reshape back, inverse transpose, slice per concat input, zero-padding for
// slice, sum over broadcast dims); reductions spread the result gradient
// back over the reduced dims.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

using namespace mlir;
using namespace kcc::kc;

using Grads = llvm::SmallVector<Value>;

namespace {

/// The number of elements a reduction over `axes` folds into one.
int64_t reducedCount(ArrayRef<int64_t> shape, ArrayRef<int64_t> axes) {
  int64_t count = 1;
  for (int64_t a : axes)
    count *= shape[a];
  return count;
}

/// Zeros shaped like `like` with dim `dim` set to `size`.
Value zerosWithDim(GradientBuilder &gb, Value like, int64_t dim, int64_t size) {
  llvm::SmallVector<int64_t> shape(GradientBuilder::shapeOf(like));
  shape[dim] = size;
  return gb.constant(GradientBuilder::typeOf(like).clone(shape), 0.0);
}

/// The adjoint of a 1-D strided slice along `dim`: places the n elements of
/// `g` at start, start + stride, ... in a dim of size `size`, zeros
/// elsewhere. Interleaving zeros is a reshape to [..., n, 1, ...], a concat
/// with zeros [..., n, stride - 1, ...] and a reshape to [..., n * stride,
/// ...]; leading and trailing zeros are concats. Only existing kc ops are
/// used, so every backend runs it (a kc.pad with interior padding, as
/// StableHLO's, would be one op: worth adding if this shows in profiles).
Value padSliceDim(GradientBuilder &gb, Value g, int64_t dim, int64_t start,
                  int64_t stride, int64_t size) {
  llvm::SmallVector<int64_t> shape(GradientBuilder::shapeOf(g));
  int64_t n = shape[dim];
  int64_t covered = n;
  if (stride > 1 && n > 0) {
    llvm::SmallVector<int64_t> split(shape);
    split.insert(split.begin() + dim + 1, 1);
    Value column = gb.reshape(g, split);
    Value spread = gb.concat(
        {column, zerosWithDim(gb, column, dim + 1, stride - 1)}, dim + 1);
    covered = n * stride;
    shape[dim] = covered;
    g = gb.reshape(spread, shape);
  }
  if (start + covered > size) {
    // The zeros after the last element overshoot the dim: drop them.
    llvm::SmallVector<int64_t> begin(shape.size(), 0), limit(shape),
        strides(shape.size(), 1);
    covered = size - start;
    limit[dim] = covered;
    g = gb.slice(g, begin, limit, strides);
  }
  llvm::SmallVector<Value> pieces;
  if (start > 0)
    pieces.push_back(zerosWithDim(gb, g, dim, start));
  pieces.push_back(g);
  if (int64_t after = size - start - covered; after > 0)
    pieces.push_back(zerosWithDim(gb, g, dim, after));
  return gb.concat(pieces, dim);
}

} // namespace

Grads ConstantOp::buildGradients(OpBuilder &builder, Value g) { return {}; }

Grads BroadcastToOp::buildGradients(OpBuilder &builder, Value g) {
  if (!GradientBuilder::isFloat(getX()))
    return {Value()};
  // Sum over the new leading dims and the stretched size-1 dims.
  GradientBuilder gb(builder, *this);
  ArrayRef<int64_t> in = GradientBuilder::shapeOf(getX());
  ArrayRef<int64_t> out = GradientBuilder::shapeOf(getResult());
  int64_t offset = out.size() - in.size();
  llvm::SmallVector<int64_t> axes;
  for (int64_t d = 0, e = out.size(); d < e; ++d)
    if (d < offset || (in[d - offset] == 1 && out[d] != 1))
      axes.push_back(d);
  Value summed = axes.empty() ? g : gb.reduceSum(g, axes, /*keepdims=*/true);
  return {gb.reshape(summed, in)};
}

Grads ReshapeOp::buildGradients(OpBuilder &builder, Value g) {
  if (!GradientBuilder::isFloat(getX()))
    return {Value()};
  GradientBuilder gb(builder, *this);
  return {gb.reshape(g, GradientBuilder::shapeOf(getX()))};
}

Grads TransposeOp::buildGradients(OpBuilder &builder, Value g) {
  if (!GradientBuilder::isFloat(getX()))
    return {Value()};
  GradientBuilder gb(builder, *this);
  ArrayRef<int64_t> perm = getPerm();
  llvm::SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  return {gb.transpose(g, inverse)};
}

Grads ConcatOp::buildGradients(OpBuilder &builder, Value g) {
  Grads grads;
  if (!GradientBuilder::isFloat(getResult())) {
    grads.resize(getInputs().size());
    return grads;
  }
  GradientBuilder gb(builder, *this);
  int64_t axis = getAxis();
  ArrayRef<int64_t> out = GradientBuilder::shapeOf(g);
  llvm::SmallVector<int64_t> start(out.size(), 0), limit(out),
      strides(out.size(), 1);
  for (Value in : getInputs()) {
    limit[axis] = start[axis] + GradientBuilder::shapeOf(in)[axis];
    grads.push_back(gb.slice(g, start, limit, strides));
    start[axis] = limit[axis];
  }
  return grads;
}

Grads SliceOp::buildGradients(OpBuilder &builder, Value g) {
  if (!GradientBuilder::isFloat(getX()))
    return {Value()};
  GradientBuilder gb(builder, *this);
  ArrayRef<int64_t> in = GradientBuilder::shapeOf(getX());
  for (int64_t d = 0, e = in.size(); d < e; ++d)
    g = padSliceDim(gb, g, d, getStart()[d], getStrides()[d], in[d]);
  return {g};
}

Grads ReduceSumOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {gb.unreduce(g, GradientBuilder::shapeOf(getX()), getAxes())};
}

Grads ReduceMeanOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  ArrayRef<int64_t> in = GradientBuilder::shapeOf(getX());
  // Scale before broadcasting: the small tensor is the cheap one.
  Value scaled = gb.scale(g, 1.0 / reducedCount(in, getAxes()));
  return {gb.unreduce(scaled, in, getAxes())};
}

Grads ReduceMaxOp::buildGradients(OpBuilder &builder, Value g) {
  // TF's rule: the gradient goes to every element equal to the maximum,
  // split evenly among ties (so it sums to the result's gradient).
  GradientBuilder gb(builder, *this);
  Value x = getX();
  ArrayRef<int64_t> in = GradientBuilder::shapeOf(x);
  Type elem = GradientBuilder::typeOf(x).getElementType();
  Value isMax = gb.compare(CompareDirection::EQ, x,
                           gb.unreduce(getResult(), in, getAxes()));
  Value mask = gb.cast(isMax, elem);
  Value ties = gb.reduceSum(mask, getAxes(), /*keepdims=*/true);
  Value share = gb.div(gb.reshape(g, GradientBuilder::shapeOf(ties)), ties);
  return {gb.mul(gb.broadcastTo(share, in), mask)};
}
