//===- KcOps.cpp - kc op verifiers and folders ----------------------------===//
//
// Verifiers defer to the shape rules in ShapeFunctions.cpp, so the IR, the
// frontend and eager mode report a bad shape with the same words.
//
//===----------------------------------------------------------------------===//

#include "ir/ImageTransform.h"
#include "ir/KcDialect.h"
#include "ir/Recurrence.h"
#include "ir/ShapeFunctions.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::kc;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// Checks a shape rule's outcome against the op's result type.
LogicalResult checkResultShape(Operation *op,
                               llvm::Expected<shapes::Dims> expected,
                               ArrayRef<int64_t> actual,
                               StringRef what = "result") {
  if (!expected)
    return op->emitOpError() << llvm::toString(expected.takeError());
  if (ArrayRef<int64_t>(*expected) != actual)
    return op->emitOpError()
           << what << " shape " << shapes::str(actual)
           << " does not match the expected " << shapes::str(*expected);
  return success();
}

LogicalResult checkSameElementType(Operation *op, Value a, Value b) {
  Type ea = cast<RankedTensorType>(a.getType()).getElementType();
  Type eb = cast<RankedTensorType>(b.getType()).getElementType();
  if (ea != eb)
    return op->emitOpError()
           << "expects element type " << ea << " to match " << eb;
  return success();
}

bool isSame(kc::Padding p) { return p == kc::Padding::Same; }

template <typename ReduceOp> LogicalResult verifyReduce(ReduceOp op) {
  return checkResultShape(
      op, shapes::reduce(shapeOf(op.getX()), op.getAxes(), op.getKeepdims()),
      shapeOf(op.getResult()));
}

template <typename PoolOp> LogicalResult verifyPool(PoolOp op) {
  return checkResultShape(op,
                          shapes::pool2d(shapeOf(op.getX()), op.getWindow(),
                                         op.getStrides(),
                                         isSame(op.getPadding())),
                          shapeOf(op.getResult()));
}

template <typename SoftmaxOp> LogicalResult verifySoftmax(SoftmaxOp op) {
  auto axis = shapes::normalizeAxis(op.getAxis(), shapeOf(op.getX()).size());
  if (!axis)
    return op.emitOpError() << llvm::toString(axis.takeError());
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::verify() {
  return checkResultShape(*this, shapes::Dims(shapeOf(getLhs())),
                          shapeOf(getResult()));
}

LogicalResult SelectOp::verify() {
  return checkResultShape(*this, shapes::Dims(shapeOf(getResult())),
                          shapeOf(getCond()), "cond");
}

LogicalResult CastOp::verify() {
  return checkResultShape(*this, shapes::Dims(shapeOf(getX())),
                          shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

LogicalResult BroadcastToOp::verify() {
  if (failed(checkSameElementType(*this, getX(), getResult())))
    return failure();
  return checkResultShape(
      *this, shapes::broadcastTo(shapeOf(getX()), shapeOf(getResult())),
      shapeOf(getResult()));
}

LogicalResult ReshapeOp::verify() {
  if (failed(checkSameElementType(*this, getX(), getResult())))
    return failure();
  return checkResultShape(
      *this, shapes::reshape(shapeOf(getX()), shapeOf(getResult())),
      shapeOf(getResult()));
}

LogicalResult TransposeOp::verify() {
  if (failed(checkSameElementType(*this, getX(), getResult())))
    return failure();
  return checkResultShape(*this, shapes::transpose(shapeOf(getX()), getPerm()),
                          shapeOf(getResult()));
}

LogicalResult ConcatOp::verify() {
  SmallVector<shapes::Dims> inputs;
  for (Value in : getInputs()) {
    if (failed(checkSameElementType(*this, in, getResult())))
      return failure();
    inputs.emplace_back(shapeOf(in));
  }
  return checkResultShape(*this, shapes::concat(inputs, getAxis()),
                          shapeOf(getResult()));
}

LogicalResult SliceOp::verify() {
  if (failed(checkSameElementType(*this, getX(), getResult())))
    return failure();
  return checkResultShape(
      *this,
      shapes::slice(shapeOf(getX()), getStart(), getLimit(), getStrides()),
      shapeOf(getResult()));
}

LogicalResult ReduceSumOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMaxOp::verify() { return verifyReduce(*this); }
LogicalResult ReduceMeanOp::verify() { return verifyReduce(*this); }

LogicalResult ArgmaxOp::verify() {
  return checkResultShape(*this, shapes::argmax(shapeOf(getX()), getAxis()),
                          shapeOf(getResult()));
}

LogicalResult OneHotOp::verify() {
  ArrayRef<int64_t> labels = shapeOf(getLabels());
  ArrayRef<int64_t> result = shapeOf(getResult());
  if (result.size() != labels.size() + 1 || result.back() < 1)
    return emitOpError() << "expects a result of rank " << labels.size() + 1
                         << " ending in the class count, got "
                         << shapes::str(result);
  return checkResultShape(*this, shapes::Dims(labels), result.drop_back(),
                          "result leading");
}

//===----------------------------------------------------------------------===//
// NN ops
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  return checkResultShape(*this,
                          shapes::matmul(shapeOf(getLhs()), shapeOf(getRhs()),
                                         getTransposeLhs(), getTransposeRhs()),
                          shapeOf(getResult()));
}

LogicalResult BatchMatmulOp::verify() {
  return checkResultShape(
      *this,
      shapes::batchMatmul(shapeOf(getLhs()), shapeOf(getRhs()),
                          getTransposeLhs(), getTransposeRhs()),
      shapeOf(getResult()));
}

LogicalResult SoftmaxOp::verify() { return verifySoftmax(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmax(*this); }

LogicalResult Conv2DOp::verify() {
  return checkResultShape(
      *this,
      shapes::conv2d(shapeOf(getInput()), shapeOf(getFilter()), getStrides(),
                     getDilations(), isSame(getPadding()), getGroups()),
      shapeOf(getResult()));
}

LogicalResult Conv2DBackpropInputOp::verify() {
  // The result is the forward input: convolving it must give grad_output.
  return checkResultShape(
      *this,
      shapes::conv2d(shapeOf(getResult()), shapeOf(getFilter()), getStrides(),
                     getDilations(), isSame(getPadding()), getGroups()),
      shapeOf(getGradOutput()), "grad_output");
}

LogicalResult Conv2DBackpropFilterOp::verify() {
  return checkResultShape(
      *this,
      shapes::conv2d(shapeOf(getInput()), shapeOf(getResult()), getStrides(),
                     getDilations(), isSame(getPadding()), getGroups()),
      shapeOf(getGradOutput()), "grad_output");
}

LogicalResult MaxPool2DOp::verify() { return verifyPool(*this); }
LogicalResult AvgPool2DOp::verify() { return verifyPool(*this); }

LogicalResult AllReduceOp::verify() {
  if (getReduction() != "sum" && getReduction() != "mean")
    return emitOpError("expects reduction \"sum\" or \"mean\", got \"")
           << getReduction() << "\"";
  return success();
}

/// The bucket ops: a known reduction over a rank-1 bucket; the wait's
/// bucket comes from a start with the same reduction.
static LogicalResult verifyBucketOp(Operation *op, Value bucket,
                                    StringRef reduction) {
  if (reduction != "sum" && reduction != "mean")
    return op->emitOpError("expects reduction \"sum\" or \"mean\", got \"")
           << reduction << "\"";
  if (cast<RankedTensorType>(bucket.getType()).getRank() != 1)
    return op->emitOpError("expects a rank-1 bucket, got ") << bucket.getType();
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  return verifyBucketOp(*this, getBucket(), getReduction());
}

LogicalResult AllReduceWaitOp::verify() {
  if (failed(verifyBucketOp(*this, getBucket(), getReduction())))
    return failure();
  auto start = getBucket().getDefiningOp<AllReduceStartOp>();
  if (!start)
    return emitOpError("expects its bucket to come from kc.all_reduce_start");
  if (start.getReduction() != getReduction())
    return emitOpError("reduction \"")
           << getReduction() << "\" differs from its start's \""
           << start.getReduction() << "\"";
  return success();
}

LogicalResult MaxPool2DGradOp::verify() {
  if (failed(checkResultShape(*this, shapes::Dims(shapeOf(getX())),
                              shapeOf(getResult()))))
    return failure();
  return checkResultShape(*this,
                          shapes::pool2d(shapeOf(getX()), getWindow(),
                                         getStrides(), isSame(getPadding())),
                          shapeOf(getGradOutput()), "grad_output");
}

LogicalResult AvgPool2DGradOp::verify() {
  return checkResultShape(*this,
                          shapes::pool2d(shapeOf(getResult()), getWindow(),
                                         getStrides(), isSame(getPadding())),
                          shapeOf(getGradOutput()), "grad_output");
}

//===----------------------------------------------------------------------===//
// Gather ops
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  if (failed(checkSameElementType(*this, getTable(), getResult())))
    return failure();
  return checkResultShape(
      *this, shapes::gather(shapeOf(getTable()), shapeOf(getIndices())),
      shapeOf(getResult()));
}

LogicalResult GatherGradOp::verify() {
  if (failed(checkSameElementType(*this, getGradOutput(), getResult())))
    return failure();
  // The result is the table: gathering from it must give grad_output.
  return checkResultShape(
      *this, shapes::gather(shapeOf(getResult()), shapeOf(getIndices())),
      shapeOf(getGradOutput()), "grad_output");
}

//===----------------------------------------------------------------------===//
// Loss ops
//===----------------------------------------------------------------------===//

namespace {

/// logits [B, T, C] and labels [B, N]: the dims CTC needs.
LogicalResult verifyCtcOperands(Operation *op, Value logits, Value labels) {
  ArrayRef<int64_t> x = shapeOf(logits), y = shapeOf(labels);
  if (x.size() != 3)
    return op->emitOpError()
           << "expects logits [batch, steps, classes], got " << shapes::str(x);
  if (y.size() != 2 || y[0] != x[0])
    return op->emitOpError() << "expects labels [" << x[0]
                             << ", max_label_length], got " << shapes::str(y);
  if (x[2] < 1)
    return op->emitOpError() << "expects at least one class (the blank)";
  return success();
}

} // namespace

LogicalResult CtcLossOp::verify() {
  if (failed(verifyCtcOperands(*this, getLogits(), getLabels())) ||
      failed(checkSameElementType(*this, getLogits(), getResult())))
    return failure();
  return checkResultShape(*this, shapes::Dims{shapeOf(getLogits())[0]},
                          shapeOf(getResult()));
}

LogicalResult CtcLossGradOp::verify() {
  if (failed(verifyCtcOperands(*this, getLogits(), getLabels())) ||
      failed(checkSameElementType(*this, getLogits(), getResult())) ||
      failed(checkSameElementType(*this, getLogits(), getGradOutput())))
    return failure();
  if (failed(checkResultShape(*this, shapes::Dims{shapeOf(getLogits())[0]},
                              shapeOf(getGradOutput()), "grad_output")))
    return failure();
  return checkResultShape(*this, shapes::Dims(shapeOf(getLogits())),
                          shapeOf(getResult()));
}

//===----------------------------------------------------------------------===//
// Image ops
//===----------------------------------------------------------------------===//

namespace {

/// images [N, H, W, C], transforms [N, 8], sampled [N, Ho, Wo, C], one
/// element type, known attributes.
template <typename OpTy>
LogicalResult verifyImageTransform(OpTy op, Value images, Value transforms,
                                   Value sampled) {
  ArrayRef<int64_t> x = shapeOf(images), t = shapeOf(transforms),
                    s = shapeOf(sampled);
  if (x.size() != 4)
    return op.emitOpError() << "expects images [batch, height, width, "
                               "channels], got "
                            << shapes::str(x);
  if (s.size() != 4 || s[0] != x[0] || s[3] != x[3])
    return op.emitOpError()
           << "expects sampled images [" << x[0] << ", height, width, " << x[3]
           << "], got " << shapes::str(s);
  if (t.size() != 2 || t[0] != x[0] || t[1] != 8)
    return op.emitOpError()
           << "expects transforms [" << x[0] << ", 8], got " << shapes::str(t);
  if (failed(checkSameElementType(op, images, transforms)) ||
      failed(checkSameElementType(op, images, sampled)))
    return failure();
  return success(succeeded(imageTransformParams(op)));
}

} // namespace

LogicalResult ImageTransformOp::verify() {
  return verifyImageTransform(*this, getImages(), getTransforms(), getResult());
}

LogicalResult ImageTransformGradOp::verify() {
  return verifyImageTransform(*this, getResult(), getTransforms(),
                              getGradOutput());
}

//===----------------------------------------------------------------------===//
// Recurrence ops
//===----------------------------------------------------------------------===//

namespace {

/// Checks `v` is `expected`, naming it.
LogicalResult checkShape(Operation *op, Value v, ArrayRef<int64_t> expected,
                         StringRef what) {
  if (shapeOf(v) == expected)
    return success();
  std::string dims;
  for (int64_t d : expected)
    dims += (dims.empty() ? "" : "x") + std::to_string(d);
  return op->emitOpError() << "expects " << what << " of shape " << dims
                           << ", got " << v.getType();
}

/// T, B, H of a recurrence from its kernel, initial state and states.
template <typename OpTy>
LogicalResult checkRecurrence(OpTy op, const kernels::RecurrenceParams &p,
                              Value states, int64_t &steps, int64_t &batch,
                              int64_t &units) {
  ArrayRef<int64_t> k = shapeOf(op.getKernel()),
                    init = shapeOf(op.getInitialState()), s = shapeOf(states);
  if (k.size() != 2 || init.size() != 2 || s.size() != 3)
    return op.emitOpError() << "expects a 2-D kernel, a 2-D initial state "
                               "and [T, B, S] states";
  units = k[0];
  batch = init[0];
  steps = s[0];
  int64_t G = kernels::recurrentGates(p.cell);
  if (failed(checkShape(op, op.getKernel(), {units, G * units}, "kernel")) ||
      failed(checkShape(op, op.getInitialState(),
                        {batch, kernels::recurrentInitialWidth(p.cell, units)},
                        "initial_state")) ||
      failed(checkShape(op, states,
                        {steps, batch, kernels::recurrentStateWidth(p, units)},
                        "states")))
    return failure();
  return success();
}

} // namespace

LogicalResult RecurrenceOp::verify() {
  FailureOr<kernels::RecurrenceParams> p = recurrenceParams(*this);
  if (failed(p))
    return failure();
  int64_t T, B, H;
  if (failed(checkRecurrence(*this, *p, getResult(), T, B, H)))
    return failure();
  int64_t GH = kernels::recurrentGates(p->cell) * H;
  return success(
      succeeded(checkShape(*this, getX(), {T, B, GH}, "x")) &&
      succeeded(checkShape(*this, getRecurrentBias(), {GH}, "recurrent_bias")));
}

LogicalResult RecurrenceGradOp::verify() {
  FailureOr<kernels::RecurrenceParams> p = recurrenceParams(*this);
  if (failed(p))
    return failure();
  int64_t T, B, H;
  if (failed(checkRecurrence(*this, *p, getStates(), T, B, H)) ||
      failed(checkShape(*this, getGradStates(), shapeOf(getStates()),
                        "grad_states")))
    return failure();
  return checkShape(*this, getResult(),
                    {kernels::recurrenceGradSize(*p, T, B, H)}, "result");
}

#define GET_OP_CLASSES
#include "ir/KcOps.cpp.inc"
