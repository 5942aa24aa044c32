//===- LowerReductions.cpp - kc reductions, argmax, softmax to linalg -----===//
//
// Reductions become linalg.generic ops with reduction iterators into a
// filled init; keepdims is an expand_shape of the reduced result (a view).
// Softmax and log_softmax are the kernel library's sequence: running max,
// exp(x - max), sum, then scale by 1/sum or subtract log(sum). After
// elementwise fusion that is three loop nests per softmax.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;

namespace {

using Args = ValueRange;
using Vals = SmallVector<Value>;

/// `type` with `axes` dropped.
RankedTensorType reducedType(RankedTensorType type, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> dims;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (!llvm::is_contained(axes, d))
      dims.push_back(type.getDimSize(d));
  return RankedTensorType::get(dims, type.getElementType());
}

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// Sum (or running max) of `x` over `axes`, axes dropped.
Value reduceOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes,
                 bool isMax) {
  auto type = cast<RankedTensorType>(x.getType());
  Value init =
      filledTensor(b, loc, reducedType(type, axes), isMax ? kNegInf : 0);
  return buildReduction(b, loc, x, axes, init,
                        [&](OpBuilder &nb, Location nloc, Args a) -> Vals {
                          if (isMax)
                            return {runningMax(nb, nloc, a[0], a[1])};
                          return {nb.create<arith::AddFOp>(nloc, a[1], a[0])};
                        });
}

template <typename OpTy> struct ReduceLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getX().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    ArrayRef<int64_t> axes = op.getAxes();
    constexpr bool isMax = std::is_same_v<OpTy, kc::ReduceMaxOp>;
    Value r = reduceOver(rewriter, loc, adaptor.getX(), axes, isMax);
    if constexpr (std::is_same_v<OpTy, kc::ReduceMeanOp>) {
      int64_t count = 1;
      for (int64_t a : axes)
        count *= inType.getDimSize(a);
      // The kernel multiplies by 1/count (NaN for an empty reduction).
      double scale = count ? 1.0 / double(count)
                           : std::numeric_limits<double>::quiet_NaN();
      auto rType = cast<RankedTensorType>(r.getType());
      r = buildElementwise(
          rewriter, loc, rType, {r},
          [&](OpBuilder &b, Location l, Args a) -> Vals {
            Value s = scalarConstant(b, l, rType.getElementType(), scale);
            return {count ? b.create<arith::MulFOp>(l, a[0], s) : s};
          });
    }
    rewriter.replaceOp(op, reshapeTensor(rewriter, loc, r, outType));
    return success();
  }
};

/// Running (max, index) pair; strict `>` keeps the first maximum, and a NaN
/// beats any number (the first NaN wins), as the kernel library's argmax.
struct ArgmaxLowering : OpConversionPattern<kc::ArgmaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::ArgmaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto inType = cast<RankedTensorType>(adaptor.getX().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t rank = inType.getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    RankedTensorType valType = reducedType(inType, {axis});
    Value vals = filledTensor(rewriter, loc, valType, kNegInf);
    Value idxs = filledTensor(rewriter, loc, outType, 0);
    SmallVector<AffineExpr> kept;
    SmallVector<utils::IteratorType> iters;
    for (int64_t d = 0; d < rank; ++d) {
      iters.push_back(d == axis ? utils::IteratorType::reduction
                                : utils::IteratorType::parallel);
      if (d != axis)
        kept.push_back(rewriter.getAffineDimExpr(d));
    }
    AffineMap outMap = AffineMap::get(rank, 0, kept, rewriter.getContext());
    SmallVector<AffineMap> maps = {rewriter.getMultiDimIdentityMap(rank),
                                   outMap, outMap};
    Type idxElt = outType.getElementType();
    auto generic = rewriter.create<linalg::GenericOp>(
        loc, TypeRange{valType, outType}, ValueRange{adaptor.getX()},
        ValueRange{vals, idxs}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange a) {
          // a[0] > a[1] || (isnan(a[0]) && !isnan(a[1])).
          Value gt =
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, a[0], a[1]);
          Value newNan = b.create<arith::AndIOp>(
              l,
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, a[0], a[0]),
              b.create<arith::CmpFOp>(l, arith::CmpFPredicate::ORD, a[1],
                                      a[1]));
          Value better = b.create<arith::OrIOp>(l, gt, newNan);
          Value i = b.create<arith::IndexCastOp>(
              l, idxElt, b.create<linalg::IndexOp>(l, axis));
          b.create<linalg::YieldOp>(
              l, ValueRange{b.create<arith::SelectOp>(l, better, a[0], a[1]),
                            b.create<arith::SelectOp>(l, better, i, a[2])});
        });
    rewriter.replaceOp(op, generic.getResult(1));
    return success();
  }
};

/// A linalg.generic over `x`'s shape that also reads `row` (x's shape with
/// `axis` dropped) broadcast along `axis`.
Value mapWithRow(OpBuilder &b, Location loc, Value x, Value row, int64_t axis,
                 const BodyBuilder &body) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      kept.push_back(b.getAffineDimExpr(d));
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, kept, b.getContext()),
                                 b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{type}, ValueRange{x, row},
      ValueRange{emptyTensor(b, loc, type)}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange a) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, a));
      });
  return generic.getResult(0);
}

template <typename OpTy, bool Log>
struct SoftmaxLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getX();
    int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
    int64_t axis = static_cast<int64_t>(op.getAxis());
    if (axis < 0)
      axis += rank;
    Value m = reduceOver(rewriter, loc, x, {axis}, /*isMax=*/true);
    // e = exp(x - m)
    Value e = mapWithRow(rewriter, loc, x, m, axis,
                         [](OpBuilder &b, Location l, Args a) -> Vals {
                           return {b.create<math::ExpOp>(
                               l, b.create<arith::SubFOp>(l, a[0], a[1]))};
                         });
    Value s = reduceOver(rewriter, loc, e, {axis}, /*isMax=*/false);
    Value result;
    if constexpr (Log) {
      // (x - m) - log(s), the kernel's grouping.
      auto rowType = cast<RankedTensorType>(s.getType());
      Value shifted =
          mapWithRow(rewriter, loc, x, m, axis,
                     [](OpBuilder &b, Location l, Args a) -> Vals {
                       return {b.create<arith::SubFOp>(l, a[0], a[1])};
                     });
      Value logSum =
          buildElementwise(rewriter, loc, rowType, {s},
                           [](OpBuilder &b, Location l, Args a) -> Vals {
                             return {b.create<math::LogOp>(l, a[0])};
                           });
      result = mapWithRow(rewriter, loc, shifted, logSum, axis,
                          [](OpBuilder &b, Location l, Args a) -> Vals {
                            return {b.create<arith::SubFOp>(l, a[0], a[1])};
                          });
    } else {
      // e * (1 / s)
      auto rowType = cast<RankedTensorType>(s.getType());
      Value inv = buildElementwise(
          rewriter, loc, rowType, {s},
          [&](OpBuilder &b, Location l, Args a) -> Vals {
            Value one = scalarConstant(b, l, rowType.getElementType(), 1);
            return {b.create<arith::DivFOp>(l, one, a[0])};
          });
      result = mapWithRow(rewriter, loc, e, inv, axis,
                          [](OpBuilder &b, Location l, Args a) -> Vals {
                            return {b.create<arith::MulFOp>(l, a[0], a[1])};
                          });
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

} // namespace

void kcc::codegen::populateReductionPatterns(RewritePatternSet &patterns) {
  patterns.add<ReduceLowering<kc::ReduceSumOp>, ReduceLowering<kc::ReduceMaxOp>,
               ReduceLowering<kc::ReduceMeanOp>, ArgmaxLowering,
               SoftmaxLowering<kc::SoftmaxOp, false>,
               SoftmaxLowering<kc::LogSoftmaxOp, true>>(patterns.getContext());
}
