//===- LowerElementwise.cpp - kc elementwise ops to linalg.generic --------===//
//
// Pointwise kc ops (arithmetic, activations, compare, select, cast),
// broadcast_to, constants, one_hot and random_uniform become all-parallel
// linalg.generic ops, which linalg's elementwise fusion merges into one loop
// nest per chain. Scalar bodies follow runtime/kernels/Elementwise.cpp
// expression for expression, so compiled code and the interpreter agree to
// the last bit wherever LLVM keeps the operation order.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;

namespace {

using Args = ValueRange;
using Vals = SmallVector<Value>;

//===----------------------------------------------------------------------===//
// Binary and unary arithmetic
//===----------------------------------------------------------------------===//

/// `x > y || x != x ? x : y`: max (and with the comparison flipped, min) that
/// propagates NaN from either side, as the kernel library does.
Value nanPropagatingSelect(OpBuilder &b, Location loc, arith::CmpFPredicate p,
                           Value x, Value y) {
  Value cmp = b.create<arith::CmpFOp>(loc, p, x, y);
  Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, x);
  Value pick = b.create<arith::OrIOp>(loc, cmp, isNan);
  return b.create<arith::SelectOp>(loc, pick, x, y);
}

Value binaryBody(Operation *op, OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<kc::AddOp>(op))
    return b.create<arith::AddFOp>(loc, x, y);
  if (isa<kc::SubOp>(op))
    return b.create<arith::SubFOp>(loc, x, y);
  if (isa<kc::MulOp>(op))
    return b.create<arith::MulFOp>(loc, x, y);
  if (isa<kc::DivOp>(op))
    return b.create<arith::DivFOp>(loc, x, y);
  if (isa<kc::PowOp>(op))
    return b.create<math::PowFOp>(loc, x, y);
  if (isa<kc::MaxOp>(op))
    return nanPropagatingSelect(b, loc, arith::CmpFPredicate::OGT, x, y);
  assert(isa<kc::MinOp>(op) && "not a kc binary op");
  return nanPropagatingSelect(b, loc, arith::CmpFPredicate::OLT, x, y);
}

template <typename OpTy> struct BinaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, {adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, Args a) -> Vals {
          return {binaryBody(op, b, loc, a[0], a[1])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

Value unaryBody(Operation *op, OpBuilder &b, Location loc, Value x) {
  Type t = x.getType();
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  if (isa<kc::NegOp>(op))
    return b.create<arith::NegFOp>(loc, x);
  if (isa<kc::ExpOp>(op))
    return b.create<math::ExpOp>(loc, x);
  if (isa<kc::LogOp>(op))
    return b.create<math::LogOp>(loc, x);
  if (isa<kc::SqrtOp>(op))
    return b.create<math::SqrtOp>(loc, x);
  if (isa<kc::RsqrtOp>(op))
    return b.create<arith::DivFOp>(loc, c(1), b.create<math::SqrtOp>(loc, x));
  if (isa<kc::AbsOp>(op))
    return b.create<math::AbsFOp>(loc, x);
  if (isa<kc::ReluOp>(op)) {
    // x < 0 ? 0 : x lets NaN through.
    Value neg =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, c(0));
    return b.create<arith::SelectOp>(loc, neg, c(0), x);
  }
  if (isa<kc::SigmoidOp>(op)) {
    // exp(-|x|) never overflows: s = 1 / (1 + e); x >= 0 ? s : e * s.
    Value e = b.create<math::ExpOp>(
        loc, b.create<arith::NegFOp>(loc, b.create<math::AbsFOp>(loc, x)));
    Value s = b.create<arith::DivFOp>(loc, c(1),
                                      b.create<arith::AddFOp>(loc, c(1), e));
    Value pos =
        b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGE, x, c(0));
    return b.create<arith::SelectOp>(loc, pos, s,
                                     b.create<arith::MulFOp>(loc, e, s));
  }
  if (isa<kc::TanhOp>(op))
    return b.create<math::TanhOp>(loc, x);
  auto gelu = cast<kc::GeluOp>(op);
  Value halfX = b.create<arith::MulFOp>(loc, c(0.5), x);
  Value inner;
  if (gelu.getApproximate()) {
    // sqrt(2/pi) * (x + 0.044715 * x * x * x)
    Value cube = b.create<arith::MulFOp>(
        loc,
        b.create<arith::MulFOp>(
            loc, b.create<arith::MulFOp>(loc, c(0.044715), x), x),
        x);
    inner = b.create<math::TanhOp>(
        loc, b.create<arith::MulFOp>(loc, c(0.79788456080286535588),
                                     b.create<arith::AddFOp>(loc, x, cube)));
  } else {
    inner = b.create<math::ErfOp>(
        loc, b.create<arith::MulFOp>(loc, x, c(0.70710678118654752440)));
  }
  return b.create<arith::MulFOp>(loc, halfX,
                                 b.create<arith::AddFOp>(loc, c(1), inner));
}

template <typename OpTy> struct UnaryLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Value result =
        buildElementwise(rewriter, op.getLoc(), type, {adaptor.getX()},
                         [&](OpBuilder &b, Location loc, Args a) -> Vals {
                           return {unaryBody(op, b, loc, a[0])};
                         });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// compare, select, cast
//===----------------------------------------------------------------------===//

struct CompareLowering : OpConversionPattern<kc::CompareOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::CompareOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    using D = kc::CompareDirection;
    D dir = op.getDirection();
    Type elt = getElementTypeOrSelf(op.getLhs().getType());
    bool isFloat = isa<FloatType>(elt);
    // i1 is stored as an unsigned byte in the kernels: compare unsigned.
    bool isBool = elt.isInteger(1);
    auto fpred = [&] {
      switch (dir) {
      case D::EQ:
        return arith::CmpFPredicate::OEQ;
      case D::NE:
        return arith::CmpFPredicate::UNE; // NaN != NaN is true.
      case D::LT:
        return arith::CmpFPredicate::OLT;
      case D::LE:
        return arith::CmpFPredicate::OLE;
      case D::GT:
        return arith::CmpFPredicate::OGT;
      case D::GE:
        return arith::CmpFPredicate::OGE;
      }
      llvm_unreachable("bad direction");
    };
    auto ipred = [&] {
      switch (dir) {
      case D::EQ:
        return arith::CmpIPredicate::eq;
      case D::NE:
        return arith::CmpIPredicate::ne;
      case D::LT:
        return isBool ? arith::CmpIPredicate::ult : arith::CmpIPredicate::slt;
      case D::LE:
        return isBool ? arith::CmpIPredicate::ule : arith::CmpIPredicate::sle;
      case D::GT:
        return isBool ? arith::CmpIPredicate::ugt : arith::CmpIPredicate::sgt;
      case D::GE:
        return isBool ? arith::CmpIPredicate::uge : arith::CmpIPredicate::sge;
      }
      llvm_unreachable("bad direction");
    };
    Value result = buildElementwise(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
        {adaptor.getLhs(), adaptor.getRhs()},
        [&](OpBuilder &b, Location loc, Args a) -> Vals {
          if (isFloat)
            return {b.create<arith::CmpFOp>(loc, fpred(), a[0], a[1])};
          return {b.create<arith::CmpIOp>(loc, ipred(), a[0], a[1])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct SelectLowering : OpConversionPattern<kc::SelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value result = buildElementwise(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
        {adaptor.getCond(), adaptor.getOnTrue(), adaptor.getOnFalse()},
        [&](OpBuilder &b, Location loc, Args a) -> Vals {
          return {b.create<arith::SelectOp>(loc, a[0], a[1], a[2])};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// One element converted as the kernel library's static_cast does (floats
/// to integers truncate toward zero; anything to i1 is `x != 0`).
Value castScalar(OpBuilder &b, Location loc, Value x, Type to) {
  Type from = x.getType();
  if (from == to)
    return x;
  auto zero = [&] { return scalarConstant(b, loc, from, 0); };
  if (to.isInteger(1)) {
    if (isa<FloatType>(from))
      return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x, zero());
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, zero());
  }
  if (auto ft = dyn_cast<FloatType>(from)) {
    if (auto tt = dyn_cast<FloatType>(to)) {
      if (tt.getWidth() > ft.getWidth())
        return b.create<arith::ExtFOp>(loc, to, x);
      return b.create<arith::TruncFOp>(loc, to, x);
    }
    return b.create<arith::FPToSIOp>(loc, to, x);
  }
  if (isa<FloatType>(to)) {
    if (from.isInteger(1))
      return b.create<arith::UIToFPOp>(loc, to, x);
    return b.create<arith::SIToFPOp>(loc, to, x);
  }
  unsigned fw = from.getIntOrFloatBitWidth(), tw = to.getIntOrFloatBitWidth();
  if (tw < fw)
    return b.create<arith::TruncIOp>(loc, to, x);
  if (from.isInteger(1))
    return b.create<arith::ExtUIOp>(loc, to, x);
  return b.create<arith::ExtSIOp>(loc, to, x);
}

struct CastLowering : OpConversionPattern<kc::CastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::CastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    if (adaptor.getX().getType() == type) {
      rewriter.replaceOp(op, adaptor.getX());
      return success();
    }
    Value result = buildElementwise(
        rewriter, op.getLoc(), type, {adaptor.getX()},
        [&](OpBuilder &b, Location loc, Args a) -> Vals {
          return {castScalar(b, loc, a[0], type.getElementType())};
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// broadcast_to, constant
//===----------------------------------------------------------------------===//

/// The input map reads dim d of the input at result dim d + offset, or at 0
/// where the input dim is a broadcast 1.
struct BroadcastToLowering : OpConversionPattern<kc::BroadcastToOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::BroadcastToOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = cast<RankedTensorType>(adaptor.getX().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    if (inType == outType) {
      rewriter.replaceOp(op, adaptor.getX());
      return success();
    }
    int64_t rank = outType.getRank(), offset = rank - inType.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d < inType.getRank(); ++d)
      exprs.push_back(inType.getDimSize(d) == 1 &&
                              outType.getDimSize(d + offset) != 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(d + offset));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, exprs, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{outType}, ValueRange{adaptor.getX()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), outType)}, maps, iters,
        [](OpBuilder &b, Location loc, ValueRange a) {
          b.create<linalg::YieldOp>(loc, a[0]);
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

struct ConstantLowering : OpConversionPattern<kc::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto value = dyn_cast<TypedAttr>(op.getValue());
    if (!value)
      return rewriter.notifyMatchFailure(op, "constant is not a typed attr");
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(op, value);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// one_hot, random_uniform: bodies that read their own indices
//===----------------------------------------------------------------------===//

/// `index(d)` of the enclosing linalg.generic as i64.
Value indexI64(OpBuilder &b, Location loc, int64_t d) {
  return b.create<arith::IndexCastOp>(loc, b.getI64Type(),
                                      b.create<linalg::IndexOp>(loc, d));
}

struct OneHotLowering : OpConversionPattern<kc::OneHotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::OneHotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto outType = cast<RankedTensorType>(op.getType());
    int64_t rank = outType.getRank();
    SmallVector<AffineExpr> exprs;
    for (int64_t d = 0; d + 1 < rank; ++d)
      exprs.push_back(rewriter.getAffineDimExpr(d));
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, exprs, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Type elt = outType.getElementType();
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{outType}, ValueRange{adaptor.getLabels()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), outType)}, maps, iters,
        [&](OpBuilder &b, Location loc, ValueRange a) {
          Value label = a[0];
          if (!label.getType().isInteger(64))
            label = b.create<arith::ExtSIOp>(loc, b.getI64Type(), label);
          Value hit = b.create<arith::CmpIOp>(
              loc, arith::CmpIPredicate::eq, label, indexI64(b, loc, rank - 1));
          b.create<linalg::YieldOp>(
              loc, ValueRange{b.create<arith::SelectOp>(
                       loc, hit, scalarConstant(b, loc, elt, 1),
                       scalarConstant(b, loc, elt, 0))});
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

/// splitmix64's finalizer, as in runtime/kernels/Random.cpp.
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The same finalizer in arith ops (i64 arithmetic wraps modulo 2^64).
Value mixOps(OpBuilder &b, Location loc, Value z) {
  auto c = [&](uint64_t v) {
    return b.create<arith::ConstantOp>(loc, b.getI64IntegerAttr(int64_t(v)));
  };
  auto xorShift = [&](Value v, uint64_t s) {
    return b.create<arith::XOrIOp>(loc, v,
                                   b.create<arith::ShRUIOp>(loc, v, c(s)));
  };
  z = b.create<arith::MulIOp>(loc, xorShift(z, 30), c(0xBF58476D1CE4E5B9ull));
  z = b.create<arith::MulIOp>(loc, xorShift(z, 27), c(0x94D049BB133111EBull));
  return xorShift(z, 31);
}

/// Generated rather than called: elements are independent, so the loop
/// fuses with its consumer (the dropout mask) and never hits memory.
struct RandomUniformLowering : OpConversionPattern<kc::RandomUniformOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::RandomUniformOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto outType = cast<RankedTensorType>(op.getType());
    auto elt = dyn_cast<FloatType>(outType.getElementType());
    if (!elt || (elt.getWidth() != 32 && elt.getWidth() != 64))
      return rewriter.notifyMatchFailure(op, "only f32 and f64 are generated");
    int64_t rank = outType.getRank();
    uint64_t seedMix = mix(uint64_t(op.getSeed()) + kGolden);
    SmallVector<AffineMap> maps = {
        AffineMap::get(rank, 0, {}, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto generic = rewriter.create<linalg::GenericOp>(
        op.getLoc(), TypeRange{outType}, ValueRange{adaptor.getCounter()},
        ValueRange{emptyTensor(rewriter, op.getLoc(), outType)}, maps, iters,
        [&](OpBuilder &b, Location loc, ValueRange a) {
          auto c = [&](uint64_t v) {
            return b.create<arith::ConstantOp>(loc,
                                               b.getI64IntegerAttr(int64_t(v)));
          };
          // key = mix(mix(seed + golden) + counter); LICM hoists it.
          Value key =
              mixOps(b, loc, b.create<arith::AddIOp>(loc, c(seedMix), a[0]));
          // Row-major flat index of this element.
          Value flat = c(0);
          int64_t stride = 1;
          for (int64_t d = rank - 1; d >= 0; --d) {
            Value term = b.create<arith::MulIOp>(loc, indexI64(b, loc, d),
                                                 c(uint64_t(stride)));
            flat = b.create<arith::AddIOp>(loc, flat, term);
            stride *= outType.getDimSize(d);
          }
          Value ctr = b.create<arith::MulIOp>(
              loc, b.create<arith::AddIOp>(loc, flat, c(1)), c(kGolden));
          Value bits = mixOps(b, loc, b.create<arith::AddIOp>(loc, key, ctr));
          bool f32 = elt.getWidth() == 32;
          Value top = b.create<arith::ShRUIOp>(loc, bits, c(f32 ? 40 : 11));
          Value asFloat = b.create<arith::UIToFPOp>(loc, elt, top);
          Value scale = scalarConstant(b, loc, elt, f32 ? 0x1p-24 : 0x1p-53);
          b.create<linalg::YieldOp>(
              loc, ValueRange{b.create<arith::MulFOp>(loc, asFloat, scale)});
        });
    rewriter.replaceOp(op, generic.getResult(0));
    return success();
  }
};

} // namespace

void kcc::codegen::populateElementwisePatterns(RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<BinaryLowering<kc::AddOp>, BinaryLowering<kc::SubOp>,
               BinaryLowering<kc::MulOp>, BinaryLowering<kc::DivOp>,
               BinaryLowering<kc::PowOp>, BinaryLowering<kc::MaxOp>,
               BinaryLowering<kc::MinOp>>(ctx);
  patterns.add<UnaryLowering<kc::NegOp>, UnaryLowering<kc::ExpOp>,
               UnaryLowering<kc::LogOp>, UnaryLowering<kc::SqrtOp>,
               UnaryLowering<kc::RsqrtOp>, UnaryLowering<kc::AbsOp>,
               UnaryLowering<kc::ReluOp>, UnaryLowering<kc::SigmoidOp>,
               UnaryLowering<kc::TanhOp>, UnaryLowering<kc::GeluOp>>(ctx);
  patterns
      .add<CompareLowering, SelectLowering, CastLowering, BroadcastToLowering,
           ConstantLowering, OneHotLowering, RandomUniformLowering>(ctx);
}
