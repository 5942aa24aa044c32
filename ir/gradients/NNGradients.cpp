//===- NNGradients.cpp - Gradient rules of matmul, softmax, conv, pooling -===//
//
// Matmul gradients are matmuls with transpose flags (no kc.transpose, so
// they stay single GEMM library calls); convolution and pooling gradients
// are the dedicated backprop ops, which map onto oneDNN / cuDNN-style
// backward primitives.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "ir/gradients/GradientBuilder.h"

using namespace mlir;
using namespace kcc::kc;

using Grads = llvm::SmallVector<Value>;

Grads MatmulOp::buildGradients(OpBuilder &builder, Value g) {
  // Y = op(A) op(B). With A^T denoted At:
  //   Y = A B     : dA = dY B^T    dB = A^T dY
  //   Y = A B^T   : dA = dY B      dB = dY^T A
  //   Y = A^T B   : dA = B dY^T    dB = A dY
  //   Y = A^T B^T : dA = B^T dY^T  dB = dY^T A^T
  GradientBuilder gb(builder, *this);
  Location loc = gb.location();
  Value a = getLhs(), b = getRhs();
  Type aType = a.getType(), bType = b.getType();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  auto mm = [&](Type type, Value l, Value r, bool tl, bool tr) -> Value {
    return builder.create<MatmulOp>(loc, type, l, r, tl, tr);
  };
  if (!ta && !tb)
    return {mm(aType, g, b, false, true), mm(bType, a, g, true, false)};
  if (!ta && tb)
    return {mm(aType, g, b, false, false), mm(bType, g, a, true, false)};
  if (ta && !tb)
    return {mm(aType, b, g, false, true), mm(bType, a, g, false, false)};
  return {mm(aType, b, g, true, true), mm(bType, g, a, true, true)};
}

Grads BatchMatmulOp::buildGradients(OpBuilder &builder, Value g) {
  // Per batch, matmul's four cases.
  GradientBuilder gb(builder, *this);
  Location loc = gb.location();
  Value a = getLhs(), b = getRhs();
  Type aType = a.getType(), bType = b.getType();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  auto mm = [&](Type type, Value l, Value r, bool tl, bool tr) -> Value {
    return builder.create<BatchMatmulOp>(loc, type, l, r, tl, tr);
  };
  if (!ta && !tb)
    return {mm(aType, g, b, false, true), mm(bType, a, g, true, false)};
  if (!ta && tb)
    return {mm(aType, g, b, false, false), mm(bType, g, a, true, false)};
  if (ta && !tb)
    return {mm(aType, b, g, false, true), mm(bType, a, g, false, false)};
  return {mm(aType, b, g, true, true), mm(bType, g, a, true, true)};
}

namespace {
int64_t normalizedAxis(int64_t axis, Value x) {
  return axis < 0 ? axis + GradientBuilder::typeOf(x).getRank() : axis;
}
} // namespace

Grads SoftmaxOp::buildGradients(OpBuilder &builder, Value g) {
  // dx = y (g - sum(g y)) along the axis.
  GradientBuilder gb(builder, *this);
  Value y = getResult();
  int64_t axis = normalizedAxis(getAxis(), y);
  Value dot = gb.reduceSum(gb.mul(g, y), {axis}, /*keepdims=*/true);
  return {gb.mul(y, gb.sub(g, gb.broadcastTo(dot, gb.shapeOf(y))))};
}

Grads LogSoftmaxOp::buildGradients(OpBuilder &builder, Value g) {
  // dx = g - softmax(x) sum(g), softmax(x) = exp(y).
  GradientBuilder gb(builder, *this);
  Value y = getResult();
  int64_t axis = normalizedAxis(getAxis(), y);
  Value total = gb.reduceSum(g, {axis}, /*keepdims=*/true);
  return {gb.sub(g, gb.mul(gb.exp(y), gb.broadcastTo(total, gb.shapeOf(y))))};
}

Grads Conv2DOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  Location loc = gb.location();
  Value dInput = builder.create<Conv2DBackpropInputOp>(
      loc, getInput().getType(), g, getFilter(), getStridesAttr(),
      getDilationsAttr(), getPaddingAttr(), getGroupsAttr());
  Value dFilter = builder.create<Conv2DBackpropFilterOp>(
      loc, getFilter().getType(), getInput(), g, getStridesAttr(),
      getDilationsAttr(), getPaddingAttr(), getGroupsAttr());
  return {dInput, dFilter};
}

Grads Conv2DBackpropInputOp::buildGradients(OpBuilder &builder, Value g) {
  // dx = conv2d^T(dy, w) is linear in both: <dx, g> = <dy, conv2d(g, w)>, so
  // d(dy) = conv2d(g, w) and d(w) = conv2d_backprop_filter(g, dy). This is
  // the transposed convolution's (Conv2DTranspose's) gradient.
  GradientBuilder gb(builder, *this);
  Location loc = gb.location();
  Value dGradOutput = builder.create<Conv2DOp>(
      loc, getGradOutput().getType(), g, getFilter(), getStridesAttr(),
      getDilationsAttr(), getPaddingAttr(), getGroupsAttr());
  Value dFilter = builder.create<Conv2DBackpropFilterOp>(
      loc, getFilter().getType(), g, getGradOutput(), getStridesAttr(),
      getDilationsAttr(), getPaddingAttr(), getGroupsAttr());
  return {dGradOutput, dFilter};
}

Grads MaxPool2DOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {builder.create<MaxPool2DGradOp>(gb.location(), getX().getType(),
                                          getX(), g, getWindowAttr(),
                                          getStridesAttr(), getPaddingAttr())};
}

Grads AvgPool2DOp::buildGradients(OpBuilder &builder, Value g) {
  GradientBuilder gb(builder, *this);
  return {builder.create<AvgPool2DGradOp>(gb.location(), getX().getType(), g,
                                          getWindowAttr(), getStridesAttr(),
                                          getPaddingAttr())};
}

Grads AllReduceOp::buildGradients(OpBuilder &builder, Value g) {
  return {builder.create<AllReduceOp>(gradientLoc(*this), g.getType(), g,
                                      getReductionAttr())};
}
