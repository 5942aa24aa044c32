//===- LowerLibraryCalls.cpp - GEMM, convolution, pooling to kcc_rt_* -----===//
//
// matmul, batch_matmul, conv2d (and both backprops), pooling (and grads),
// gather, ctc_loss, image_transform and the recurrent cells' steps run the
// kernel library (oneDNN for GEMM and convolution) through the C entry points
// of runtime/LibraryCalls.h, so compiled code and the interpreter share
// kernels. The ABI is deliberately plain: data pointers (inputs, then the
// output), then the dims of every array in that order, then the op's integer
// attributes, all i64:
//
//   kcc_rt_matmul_f32(a, b, out, a0, a1, b0, b1, out0, out1, ta, tb)
//
// The tensors cross into memref land with to_memref / to_tensor, so one-shot
// bufferization sees a fresh, writable, identity-layout output buffer per
// call and inserts a copy only when an input is a strided view.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/LoweringUtils.h"
#include "ir/ImageTransform.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cstring>

#define DEBUG_TYPE "kc-lower-to-linalg"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;

namespace {

/// What a library call needs besides its tensors.
struct CallSpec {
  std::string name;           ///< without prefix and dtype suffix
  SmallVector<Value> inputs;  ///< tensors, in ABI order
  SmallVector<int64_t> attrs; ///< trailing i64 arguments
  /// Elementwise calls of any rank take the output's element count alone
  /// instead of every array's dims, so one declaration serves all shapes.
  bool flat = false;
};

/// Emits the call for `op` and replaces it with the output tensor.
LogicalResult emitCall(Operation *op, const CallSpec &spec,
                       ConversionPatternRewriter &rewriter) {
  Location loc = op->getLoc();
  auto outType = cast<RankedTensorType>(op->getResult(0).getType());
  Type elt = outType.getElementType();
  // The products also run in bfloat16 (float32 accumulation); every other
  // call sees bfloat16 widened by kc-widen-bf16.
  bool product =
      llvm::is_contained({"matmul", "batch_matmul", "conv2d",
                          "conv2d_backprop_input", "conv2d_backprop_filter"},
                         spec.name);
  if (!elt.isF32() && !elt.isF64() && !(elt.isBF16() && product))
    return rewriter.notifyMatchFailure(op, "library calls take f32 or f64");
  std::string name = (kLibraryCallPrefix + spec.name +
                      (elt.isF32()    ? "_f32"
                       : elt.isBF16() ? "_bf16"
                                      : "_f64"))
                         .str();

  SmallVector<Value> args;
  SmallVector<int64_t> dims;
  for (Value in : spec.inputs) {
    auto t = cast<RankedTensorType>(in.getType());
    auto mt = MemRefType::get(t.getShape(), t.getElementType());
    // read_only: the kernels never write their inputs, so bufferization
    // passes a read-only argument's buffer as is instead of copying it.
    Value m = rewriter.create<bufferization::ToMemrefOp>(loc, mt, in,
                                                         /*read_only=*/true);
    args.push_back(dataPointer(rewriter, loc, m));
    if (!spec.flat)
      llvm::append_range(dims, t.getShape());
  }
  auto outMemType = MemRefType::get(outType.getShape(), elt);
  // 64-byte alignment, as NDArray: full vectors for oneDNN.
  Value out = rewriter.create<memref::AllocOp>(loc, outMemType,
                                               rewriter.getI64IntegerAttr(64));
  args.push_back(dataPointer(rewriter, loc, out));
  if (spec.flat)
    dims.push_back(outType.getNumElements());
  else
    llvm::append_range(dims, outType.getShape());
  for (int64_t v : llvm::concat<const int64_t>(dims, spec.attrs))
    args.push_back(
        rewriter.create<arith::ConstantOp>(loc, rewriter.getI64IntegerAttr(v)));

  auto module = op->getParentOfType<ModuleOp>();
  auto fnType = rewriter.getFunctionType(ValueRange(args).getTypes(), {});
  func::FuncOp callee = codegen::getOrDeclare(rewriter, module, name, fnType);
  if (callee.getFunctionType() != fnType)
    return op->emitOpError("conflicting declaration of ") << name;
  rewriter.create<func::CallOp>(loc, callee, args);
  rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
      op, outType, out, /*restrict=*/true, /*writable=*/true);
  LLVM_DEBUG(llvm::dbgs() << "library call " << name << " for " << *op << "\n");
  return success();
}

int64_t padCode(kc::Padding p) { return p == kc::Padding::Same ? 1 : 0; }

struct MatmulLowering : OpConversionPattern<kc::MatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::MatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(op,
                    {"matmul",
                     {adaptor.getLhs(), adaptor.getRhs()},
                     {op.getTransposeLhs(), op.getTransposeRhs()}},
                    rewriter);
  }
};

struct BatchMatmulLowering : OpConversionPattern<kc::BatchMatmulOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::BatchMatmulOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(op,
                    {"batch_matmul",
                     {adaptor.getLhs(), adaptor.getRhs()},
                     {op.getTransposeLhs(), op.getTransposeRhs()}},
                    rewriter);
  }
};

template <typename OpTy> SmallVector<int64_t> convAttrs(OpTy op) {
  ArrayRef<int64_t> s = op.getStrides(), d = op.getDilations();
  return {s[0],
          s[1],
          d[0],
          d[1],
          padCode(op.getPadding()),
          static_cast<int64_t>(op.getGroups())};
}

template <typename OpTy> SmallVector<int64_t> poolAttrs(OpTy op) {
  ArrayRef<int64_t> w = op.getWindow(), s = op.getStrides();
  return {w[0], w[1], s[0], s[1], padCode(op.getPadding())};
}

struct Conv2DLowering : OpConversionPattern<kc::Conv2DOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::Conv2DOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(
        op,
        {"conv2d", {adaptor.getInput(), adaptor.getFilter()}, convAttrs(op)},
        rewriter);
  }
};

struct Conv2DBackpropInputLowering
    : OpConversionPattern<kc::Conv2DBackpropInputOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::Conv2DBackpropInputOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(op,
                    {"conv2d_backprop_input",
                     {adaptor.getGradOutput(), adaptor.getFilter()},
                     convAttrs(op)},
                    rewriter);
  }
};

struct Conv2DBackpropFilterLowering
    : OpConversionPattern<kc::Conv2DBackpropFilterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::Conv2DBackpropFilterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(op,
                    {"conv2d_backprop_filter",
                     {adaptor.getInput(), adaptor.getGradOutput()},
                     convAttrs(op)},
                    rewriter);
  }
};

template <typename OpTy> struct PoolLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef name =
        std::is_same_v<OpTy, kc::MaxPool2DOp> ? "max_pool2d" : "avg_pool2d";
    return emitCall(op, {name.str(), {adaptor.getX()}, poolAttrs(op)},
                    rewriter);
  }
};

struct MaxPoolGradLowering : OpConversionPattern<kc::MaxPool2DGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::MaxPool2DGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(op,
                    {"max_pool2d_grad",
                     {adaptor.getX(), adaptor.getGradOutput()},
                     poolAttrs(op)},
                    rewriter);
  }
};

struct AvgPoolGradLowering : OpConversionPattern<kc::AvgPool2DGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::AvgPool2DGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(
        op, {"avg_pool2d_grad", {adaptor.getGradOutput()}, poolAttrs(op)},
        rewriter);
  }
};

/// The collectives: kcc_rt_<name>_*(in, out, n, mean), all flat.
/// all_reduce is MPI_Allreduce into a fresh buffer, so the gradient it
/// reads stays untouched. all_reduce_start copies the packed gradients into
/// its own buffer, which MPI reduces in place until all_reduce_wait copies
/// the result out; the memory planner keeps that buffer alive from the
/// start to the wait, its one user.
template <typename OpTy> struct CollectiveLowering : OpConversionPattern<OpTy> {
  CollectiveLowering(MLIRContext *ctx, StringRef name)
      : OpConversionPattern<OpTy>(ctx), name(name.str()) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    CallSpec spec{name,
                  {adaptor.getOperands()[0]},
                  {op.getReduction() == "mean" ? 1 : 0}};
    spec.flat = true;
    return emitCall(op, spec, rewriter);
  }
  std::string name;
};

/// `v` as a tensor of `shape` (row-major), through kc.reshape, which the
/// conversion lowers in turn; `v` itself when it has that shape.
Value reshapeTo(ConversionPatternRewriter &rewriter, Location loc, Value v,
                ArrayRef<int64_t> shape) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getShape() == shape)
    return v;
  return rewriter.create<kc::ReshapeOp>(
      loc, RankedTensorType::get(shape, t.getElementType()), v);
}

/// "gather_i32" / "gather_grad_i64": the index type is part of the name.
std::string gatherName(StringRef base, Value indices) {
  auto t = cast<RankedTensorType>(indices.getType());
  return (base + (t.getElementType().isInteger(32) ? "_i32" : "_i64")).str();
}

/// The calls take a [rows, width] table and flat indices; other ranks are
/// reshaped around a 2-D gather (row-major, so no data moves).
struct GatherLowering : OpConversionPattern<kc::GatherOp> {
  GatherLowering(MLIRContext *ctx) : OpConversionPattern(ctx) {
    // The reshaped form is the same op in the direct case: one recursion.
    setHasBoundedRewriteRecursion();
  }
  LogicalResult
  matchAndRewrite(kc::GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto table = cast<RankedTensorType>(op.getTable().getType());
    auto indices = cast<RankedTensorType>(op.getIndices().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t rows = table.getDimSize(0), width = table.getNumElements() / rows;
    int64_t n = indices.getNumElements();
    if (table.getRank() == 2 && indices.getRank() == 1)
      return emitCall(op,
                      {gatherName("gather", adaptor.getIndices()),
                       {adaptor.getTable(), adaptor.getIndices()},
                       {}},
                      rewriter);
    Location loc = op.getLoc();
    Value flat = rewriter.create<kc::GatherOp>(
        loc, RankedTensorType::get({n, width}, outType.getElementType()),
        reshapeTo(rewriter, loc, adaptor.getTable(), {rows, width}),
        reshapeTo(rewriter, loc, adaptor.getIndices(), {n}));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, flat, outType.getShape()));
    return success();
  }
};

struct GatherGradLowering : OpConversionPattern<kc::GatherGradOp> {
  GatherGradLowering(MLIRContext *ctx) : OpConversionPattern(ctx) {
    // The reshaped form is the same op in the direct case: one recursion.
    setHasBoundedRewriteRecursion();
  }
  LogicalResult
  matchAndRewrite(kc::GatherGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto indices = cast<RankedTensorType>(op.getIndices().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t rows = outType.getDimSize(0),
            width = outType.getNumElements() / rows;
    int64_t n = indices.getNumElements();
    if (outType.getRank() == 2 && indices.getRank() == 1)
      return emitCall(op,
                      {gatherName("gather_grad", adaptor.getIndices()),
                       {adaptor.getIndices(), adaptor.getGradOutput()},
                       {}},
                      rewriter);
    Location loc = op.getLoc();
    Value flat = rewriter.create<kc::GatherGradOp>(
        loc, RankedTensorType::get({rows, width}, outType.getElementType()),
        reshapeTo(rewriter, loc, adaptor.getIndices(), {n}),
        reshapeTo(rewriter, loc, adaptor.getGradOutput(), {n, width}));
    rewriter.replaceOp(op, reshapeTo(rewriter, loc, flat, outType.getShape()));
    return success();
  }
};

/// kcc_rt_ctc_loss_*(logits, labels, out, dims) and
/// kcc_rt_ctc_loss_grad_*(logits, labels, grad_output, out, dims).
struct CtcLossLowering : OpConversionPattern<kc::CtcLossOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::CtcLossOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(
        op, {"ctc_loss", {adaptor.getLogits(), adaptor.getLabels()}, {}},
        rewriter);
  }
};

struct CtcLossGradLowering : OpConversionPattern<kc::CtcLossGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::CtcLossGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    return emitCall(
        op,
        {"ctc_loss_grad",
         {adaptor.getLogits(), adaptor.getLabels(), adaptor.getGradOutput()},
         {}},
        rewriter);
  }
};

/// kcc_rt_image_transform_*(images, transforms, out, dims, interpolation,
/// fill mode, fill value bits) and its gradient (transforms, grad_output).
template <typename OpTy>
SmallVector<int64_t>
imageTransformAttrs(OpTy op, const kernels::ImageTransformParams &p) {
  int64_t bits;
  std::memcpy(&bits, &p.fillValue, sizeof(bits));
  return {static_cast<int64_t>(p.interpolation),
          static_cast<int64_t>(p.fillMode), bits};
}

struct ImageTransformLowering : OpConversionPattern<kc::ImageTransformOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::ImageTransformOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<kernels::ImageTransformParams> p = kc::imageTransformParams(op);
    if (failed(p))
      return failure();
    return emitCall(op,
                    {"image_transform",
                     {adaptor.getImages(), adaptor.getTransforms()},
                     imageTransformAttrs(op, *p)},
                    rewriter);
  }
};

struct ImageTransformGradLowering
    : OpConversionPattern<kc::ImageTransformGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::ImageTransformGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<kernels::ImageTransformParams> p = kc::imageTransformParams(op);
    if (failed(p))
      return failure();
    return emitCall(op,
                    {"image_transform_grad",
                     {adaptor.getTransforms(), adaptor.getGradOutput()},
                     imageTransformAttrs(op, *p)},
                    rewriter);
  }
};

} // namespace

void kcc::codegen::populateLibraryCallPatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<CollectiveLowering<kc::AllReduceOp>>(ctx, "all_reduce");
  patterns.add<CollectiveLowering<kc::AllReduceStartOp>>(ctx,
                                                         "all_reduce_start");
  patterns.add<CollectiveLowering<kc::AllReduceWaitOp>>(ctx, "all_reduce_wait");
  patterns.add<MatmulLowering, BatchMatmulLowering, Conv2DLowering,
               Conv2DBackpropInputLowering, Conv2DBackpropFilterLowering,
               PoolLowering<kc::MaxPool2DOp>, PoolLowering<kc::AvgPool2DOp>,
               MaxPoolGradLowering, AvgPoolGradLowering>(patterns.getContext());
  patterns.add<GatherLowering, GatherGradLowering>(patterns.getContext());
  patterns.add<CtcLossLowering, CtcLossGradLowering>(patterns.getContext());
  patterns.add<ImageTransformLowering, ImageTransformGradLowering>(
      patterns.getContext());
  // kc.recurrence and its gradient: codegen/lowering/LowerRecurrence.cpp.
  populateRecurrencePatterns(patterns);
}
