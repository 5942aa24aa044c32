//===- LowerShape.cpp - kc reshape/transpose/concat/slice to tensor ops ---===//
//
// Data movement becomes tensor and linalg ops that bufferize to views where
// possible: reshape and slice become collapse/expand and extract_slice
// (views, no copy); transpose is a linalg.transpose; concat writes each input
// into its slot of one destination with tensor.insert_slice.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;

namespace {

struct ReshapeLowering : OpConversionPattern<kc::ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, reshapeTensor(rewriter, op.getLoc(), adaptor.getX(),
                                         cast<RankedTensorType>(op.getType())));
    return success();
  }
};

struct TransposeLowering : OpConversionPattern<kc::TransposeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::TransposeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value init = emptyTensor(rewriter, op.getLoc(), type);
    auto t = rewriter.create<linalg::TransposeOp>(op.getLoc(), adaptor.getX(),
                                                  init, op.getPerm());
    rewriter.replaceOp(op, t->getResult(0));
    return success();
  }
};

struct ConcatLowering : OpConversionPattern<kc::ConcatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::ConcatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    int64_t axis = static_cast<int64_t>(op.getAxis()), rank = type.getRank();
    if (axis < 0)
      axis += rank;
    Value dest = emptyTensor(rewriter, op.getLoc(), type);
    int64_t offset = 0;
    for (Value in : adaptor.getInputs()) {
      auto inType = cast<RankedTensorType>(in.getType());
      SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
      for (int64_t d = 0; d < rank; ++d)
        sizes.push_back(rewriter.getIndexAttr(inType.getDimSize(d)));
      offsets[axis] = rewriter.getIndexAttr(offset);
      dest = rewriter.create<tensor::InsertSliceOp>(op.getLoc(), in, dest,
                                                    offsets, sizes, strides);
      offset += inType.getDimSize(axis);
    }
    rewriter.replaceOp(op, dest);
    return success();
  }
};

struct SliceLowering : OpConversionPattern<kc::SliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::SliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      offsets.push_back(rewriter.getIndexAttr(op.getStart()[d]));
      sizes.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
      strides.push_back(rewriter.getIndexAttr(op.getStrides()[d]));
    }
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        op, type, adaptor.getX(), offsets, sizes, strides);
    return success();
  }
};

} // namespace

void kcc::codegen::populateShapePatterns(RewritePatternSet &patterns) {
  patterns
      .add<ReshapeLowering, TransposeLowering, ConcatLowering, SliceLowering>(
          patterns.getContext());
}
