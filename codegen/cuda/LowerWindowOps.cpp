//===- LowerWindowOps.cpp - Convolution and pooling as linalg.generic ----===//
//
// kc-cuda-lower-window-ops: the GPU has no oneDNN, so kcc generates these
// ops. Forward convolution, its filter gradient and max pooling read a padded
// input through affine maps; the rest gather: each output element visits the
// windows that touch it, so no kernel needs atomics and sums run in the
// kernel library's order (windows in row-major order). Geometry (the TF
// `same` rule, windows clipped to the input) is the kernel library's.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <limits>

namespace kcc {
#define GEN_PASS_DEF_KCCUDALOWERWINDOWOPS
#include "codegen/cuda/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;

namespace {

/// One spatial dimension of a window op (kernels::windowOutputSize and
/// windowPadBefore, restated: codegen does not link the kernel library).
struct Axis {
  int64_t in, out, window, stride, dilation, padBefore, padAfter;

  Axis(int64_t in, int64_t window, int64_t stride, int64_t dilation,
       kc::Padding padding)
      : in(in), window(window), stride(stride), dilation(dilation) {
    int64_t extent = (window - 1) * dilation + 1;
    if (padding == kc::Padding::Same)
      out = (in + stride - 1) / stride;
    else
      out = in >= extent ? (in - extent) / stride + 1 : 0;
    int64_t total = padding == kc::Padding::Same
                        ? std::max<int64_t>((out - 1) * stride + extent - in, 0)
                        : 0;
    padBefore = total / 2;
    // Enough rows after for every window the output reads (never negative).
    padAfter =
        std::max<int64_t>((out - 1) * stride + extent - in - padBefore, 0);
  }
};

using Body = function_ref<Value(OpBuilder &, Location, ValueRange)>;

Value index(OpBuilder &b, Location loc, int64_t d) {
  return b.create<linalg::IndexOp>(loc, d);
}
Value cIdx(OpBuilder &b, Location loc, int64_t v) {
  return b.create<arith::ConstantIndexOp>(loc, v);
}

/// tensor.pad of an NHWC tensor's H and W by `h`/`w` with `value`.
Value padNHWC(OpBuilder &b, Location loc, Value x, const Axis &h, const Axis &w,
              double value) {
  if (!h.padBefore && !h.padAfter && !w.padBefore && !w.padAfter)
    return x;
  auto type = cast<RankedTensorType>(x.getType());
  SmallVector<int64_t> shape(type.getShape());
  shape[1] += h.padBefore + h.padAfter;
  shape[2] += w.padBefore + w.padAfter;
  auto padded = RankedTensorType::get(shape, type.getElementType());
  SmallVector<OpFoldResult> low = {
      b.getIndexAttr(0), b.getIndexAttr(h.padBefore),
      b.getIndexAttr(w.padBefore), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> high = {
      b.getIndexAttr(0), b.getIndexAttr(h.padAfter), b.getIndexAttr(w.padAfter),
      b.getIndexAttr(0)};
  Value pad = scalarConstant(b, loc, type.getElementType(), value);
  return b.create<tensor::PadOp>(loc, padded, x, low, high, pad);
}

/// A 4-D result over 6 or 7 loops: outputs use the first four dimensions,
/// the body folds each input element into the accumulator.
Value windowGeneric(OpBuilder &b, Location loc, Value init, ValueRange inputs,
                    ArrayRef<AffineMap> inputMaps, unsigned numLoops,
                    Body body) {
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineMap> maps(inputMaps);
  SmallVector<AffineExpr> outDims;
  for (unsigned d = 0; d < 4; ++d)
    outDims.push_back(getAffineDimExpr(d, ctx));
  maps.push_back(AffineMap::get(numLoops, 0, outDims, ctx));
  SmallVector<utils::IteratorType> iters(numLoops,
                                         utils::IteratorType::reduction);
  for (unsigned d = 0; d < 4; ++d)
    iters[d] = utils::IteratorType::parallel;
  auto generic = b.create<linalg::GenericOp>(
      loc, init.getType(), inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

AffineMap dims(MLIRContext *ctx, unsigned numLoops, ArrayRef<AffineExpr> e) {
  return AffineMap::get(numLoops, 0, e, ctx);
}

/// The output position `o` of window tap `k` reading input position `i`:
/// `o` such that o * stride - padBefore + k * dilation == i, and whether it
/// exists (divisible, in range). `o` is clamped to 0 when it does not.
std::pair<Value, Value> sourceOf(OpBuilder &b, Location loc, Value i, Value k,
                                 const Axis &a) {
  Value t = b.create<arith::SubIOp>(
      loc, b.create<arith::AddIOp>(loc, i, cIdx(b, loc, a.padBefore)),
      b.create<arith::MulIOp>(loc, k, cIdx(b, loc, a.dilation)));
  Value stride = cIdx(b, loc, a.stride);
  Value o = b.create<arith::DivSIOp>(loc, t, stride);
  Value c0 = cIdx(b, loc, 0);
  Value ok = b.create<arith::AndIOp>(
      loc, b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, t, c0),
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq,
                              b.create<arith::RemSIOp>(loc, t, stride), c0));
  ok = b.create<arith::AndIOp>(
      loc, ok,
      b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, o,
                              cIdx(b, loc, a.out)));
  return {b.create<arith::SelectOp>(loc, ok, o, c0), ok};
}

/// 1 / (real elements of pooling window (oh, ow)), as the kernel library.
Value inverseCount(OpBuilder &b, Location loc, Type elt, Value oh, Value ow,
                   const Axis &h, const Axis &w) {
  auto extent = [&](Value o, const Axis &a) {
    Value start = b.create<arith::SubIOp>(
        loc, b.create<arith::MulIOp>(loc, o, cIdx(b, loc, a.stride)),
        cIdx(b, loc, a.padBefore));
    Value end = b.create<arith::MinSIOp>(
        loc, cIdx(b, loc, a.in),
        b.create<arith::AddIOp>(loc, start, cIdx(b, loc, a.window)));
    start = b.create<arith::MaxSIOp>(loc, start, cIdx(b, loc, 0));
    return b.create<arith::SubIOp>(loc, end, start);
  };
  Value n = b.create<arith::MulIOp>(loc, extent(oh, h), extent(ow, w));
  Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), n);
  Value f = b.create<arith::SIToFPOp>(loc, elt, i64);
  return b.create<arith::DivFOp>(loc, scalarConstant(b, loc, elt, 1.0), f);
}

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

template <typename OpTy> struct ConvLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    if (op.getGroups() != 1)
      return op.emitOpError("groups = ")
             << op.getGroups() << " has no CUDA lowering (only groups = 1)";
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto outType = cast<RankedTensorType>(op.getType());
    Type elt = outType.getElementType();
    ArrayRef<int64_t> s = op.getStrides(), dl = op.getDilations();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    Value zeros = filledTensor(b, loc, outType, 0);
    auto mac = [](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Value prod = nb.create<arith::MulFOp>(l, a[0], a[1]);
      return nb.create<arith::AddFOp>(l, a[2], prod);
    };

    if constexpr (std::is_same_v<OpTy, kc::Conv2DOp>) {
      auto in = cast<RankedTensorType>(adaptor.getInput().getType());
      auto f = cast<RankedTensorType>(adaptor.getFilter().getType());
      Axis h(in.getDimSize(1), f.getDimSize(0), s[0], dl[0], op.getPadding());
      Axis w(in.getDimSize(2), f.getDimSize(1), s[1], dl[1], op.getPadding());
      Value x = padNHWC(b, loc, adaptor.getInput(), h, w, 0);
      // (n, oh, ow, f, kh, kw, c)
      AffineMap xMap = dims(
          ctx, 7,
          {d(0), d(1) * s[0] + d(4) * dl[0], d(2) * s[1] + d(5) * dl[1], d(6)});
      AffineMap wMap = dims(ctx, 7, {d(4), d(5), d(6), d(3)});
      b.replaceOp(op, windowGeneric(b, loc, zeros, {x, adaptor.getFilter()},
                                    {xMap, wMap}, 7, mac));
    } else if constexpr (std::is_same_v<OpTy, kc::Conv2DBackpropFilterOp>) {
      auto in = cast<RankedTensorType>(adaptor.getInput().getType());
      Axis h(in.getDimSize(1), outType.getDimSize(0), s[0], dl[0],
             op.getPadding());
      Axis w(in.getDimSize(2), outType.getDimSize(1), s[1], dl[1],
             op.getPadding());
      Value x = padNHWC(b, loc, adaptor.getInput(), h, w, 0);
      // (kh, kw, c, f, n, oh, ow)
      AffineMap xMap = dims(
          ctx, 7,
          {d(4), d(5) * s[0] + d(0) * dl[0], d(6) * s[1] + d(1) * dl[1], d(2)});
      AffineMap dyMap = dims(ctx, 7, {d(4), d(5), d(6), d(3)});
      b.replaceOp(op, windowGeneric(b, loc, zeros, {x, adaptor.getGradOutput()},
                                    {xMap, dyMap}, 7, mac));
    } else {
      // Backprop input, gathered: dx[n,h,w,c] = sum over (kh, kw, f) of
      // dy[n,oh,ow,f] * w[kh,kw,c,f] where oh*s - pad + kh*d == h.
      auto f = cast<RankedTensorType>(adaptor.getFilter().getType());
      Value dy = adaptor.getGradOutput();
      Axis h(outType.getDimSize(1), f.getDimSize(0), s[0], dl[0],
             op.getPadding());
      Axis w(outType.getDimSize(2), f.getDimSize(1), s[1], dl[1],
             op.getPadding());
      // (n, h, w, c, kh, kw, f)
      AffineMap wMap = dims(ctx, 7, {d(4), d(5), d(3), d(6)});
      auto body = [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
        auto [oh, okH] = sourceOf(nb, l, index(nb, l, 1), index(nb, l, 4), h);
        auto [ow, okW] = sourceOf(nb, l, index(nb, l, 2), index(nb, l, 5), w);
        Value g = nb.create<tensor::ExtractOp>(
            l, dy, ValueRange{index(nb, l, 0), oh, ow, index(nb, l, 6)});
        Value prod = nb.create<arith::MulFOp>(l, g, a[0]);
        Value ok = nb.create<arith::AndIOp>(l, okH, okW);
        Value term = nb.create<arith::SelectOp>(l, ok, prod,
                                                scalarConstant(nb, l, elt, 0));
        return nb.create<arith::AddFOp>(l, a[1], term);
      };
      b.replaceOp(op, windowGeneric(b, loc, zeros, {adaptor.getFilter()},
                                    {wMap}, 7, body));
    }
    return success();
  }
};

/// The (KH, KW) loop bounds of a pooling generic come from this operand's
/// shape; its elements are never read.
Value windowShape(OpBuilder &b, Location loc, const Axis &h, const Axis &w,
                  Type elt) {
  return b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{h.window, w.window},
                                   elt);
}

template <typename OpTy> struct PoolLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &b) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto outType = cast<RankedTensorType>(op.getType());
    Type elt = outType.getElementType();
    ArrayRef<int64_t> win = op.getWindow(), s = op.getStrides();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    constexpr bool isMax = std::is_same_v<OpTy, kc::MaxPool2DOp>;
    constexpr bool isAvg = std::is_same_v<OpTy, kc::AvgPool2DOp>;
    constexpr bool isMaxGrad = std::is_same_v<OpTy, kc::MaxPool2DGradOp>;
    // The pooled input's spatial sizes: the operand's, or (avg grad) the
    // result's.
    RankedTensorType inType;
    if constexpr (isMax || isAvg || isMaxGrad)
      inType = cast<RankedTensorType>(adaptor.getX().getType());
    else
      inType = outType;
    Axis h(inType.getDimSize(1), win[0], s[0], 1, op.getPadding());
    Axis w(inType.getDimSize(2), win[1], s[1], 1, op.getPadding());
    Value window = windowShape(b, loc, h, w, elt);
    AffineMap winMap = dims(ctx, 6, {d(4), d(5)});

    if constexpr (isMax || isAvg) {
      // (n, oh, ow, c, kh, kw) over the padded input: -inf never wins a
      // max, zeros do not change a sum.
      Value x = padNHWC(b, loc, adaptor.getX(), h, w, isMax ? kNegInf : 0);
      AffineMap xMap =
          dims(ctx, 6, {d(0), d(1) * s[0] + d(4), d(2) * s[1] + d(5), d(3)});
      Value init = filledTensor(b, loc, outType, isMax ? kNegInf : 0);
      Value r =
          windowGeneric(b, loc, init, {x, window}, {xMap, winMap}, 6,
                        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
                          if (isMax)
                            return runningMax(nb, l, a[0], a[2]);
                          return nb.create<arith::AddFOp>(l, a[2], a[0]);
                        });
      if (isAvg)
        r = buildElementwise(
            b, loc, outType, {r},
            [&](OpBuilder &nb, Location l, ValueRange a) -> SmallVector<Value> {
              Value inv = inverseCount(nb, l, elt, index(nb, l, 1),
                                       index(nb, l, 2), h, w);
              return {nb.create<arith::MulFOp>(l, a[0], inv)};
            });
      b.replaceOp(op, r);
      return success();
    } else {
      return lowerGrad(op, adaptor, b, h, w, window, winMap);
    }
  }

  LogicalResult lowerGrad(OpTy op, typename OpTy::Adaptor adaptor,
                          ConversionPatternRewriter &b, const Axis &h,
                          const Axis &w, Value window, AffineMap winMap) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto outType = cast<RankedTensorType>(op.getType());
    Type elt = outType.getElementType();
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    constexpr bool isMaxGrad = std::is_same_v<OpTy, kc::MaxPool2DGradOp>;
    RankedTensorType inType = outType;
    (void)d;
    (void)inType;
    Value dy = adaptor.getGradOutput();
    Value where;
    if constexpr (isMaxGrad) {
      // Each window's first maximum (row-major scan, strict >, the first
      // real element always taken) as a flat h*W+w position.
      Value x = adaptor.getX();
      auto pooled = RankedTensorType::get(
          {inType.getDimSize(0), h.out, w.out, inType.getDimSize(3)}, elt);
      auto posType = RankedTensorType::get(pooled.getShape(), b.getI64Type());
      Value best = filledTensor(b, loc, pooled, kNegInf);
      Value pos = filledTensor(b, loc, posType, -1);
      SmallVector<AffineMap> maps = {winMap,
                                     dims(ctx, 6, {d(0), d(1), d(2), d(3)}),
                                     dims(ctx, 6, {d(0), d(1), d(2), d(3)})};
      SmallVector<utils::IteratorType> iters(4, utils::IteratorType::parallel);
      iters.append(2, utils::IteratorType::reduction);
      auto argmax = b.create<linalg::GenericOp>(
          loc, TypeRange{pooled, posType}, ValueRange{window},
          ValueRange{best, pos}, maps, iters,
          [&](OpBuilder &nb, Location l, ValueRange a) {
            auto at = [&](unsigned dim, const Axis &ax, unsigned k) {
              Value i = nb.create<arith::AddIOp>(
                  l,
                  nb.create<arith::MulIOp>(l, index(nb, l, dim),
                                           cIdx(nb, l, ax.stride)),
                  nb.create<arith::SubIOp>(l, index(nb, l, k),
                                           cIdx(nb, l, ax.padBefore)));
              Value ok = nb.create<arith::AndIOp>(
                  l,
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::sge, i,
                                           cIdx(nb, l, 0)),
                  nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::slt, i,
                                           cIdx(nb, l, ax.in)));
              return std::make_pair(
                  nb.create<arith::SelectOp>(l, ok, i, cIdx(nb, l, 0))
                      .getResult(),
                  ok);
            };
            auto [iy, okY] = at(1, h, 4);
            auto [ix, okX] = at(2, w, 5);
            Value v = nb.create<tensor::ExtractOp>(
                l, x, ValueRange{index(nb, l, 0), iy, ix, index(nb, l, 3)});
            Value none = nb.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::slt, a[2],
                nb.create<arith::ConstantIntOp>(l, 0, 64));
            // The first maximum wins, and a NaN beats any number (the first
            // NaN takes the gradient), as the kernel library's maxPoolGrad.
            Value gt =
                nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::OGT, v, a[1]);
            Value newNan = nb.create<arith::AndIOp>(
                l, nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::UNO, v, v),
                nb.create<arith::CmpFOp>(l, arith::CmpFPredicate::ORD, a[1],
                                         a[1]));
            Value better = nb.create<arith::AndIOp>(
                l, nb.create<arith::AndIOp>(l, okY, okX),
                nb.create<arith::OrIOp>(
                    l, nb.create<arith::OrIOp>(l, gt, newNan), none));
            Value flat = nb.create<arith::AddIOp>(
                l, nb.create<arith::MulIOp>(l, iy, cIdx(nb, l, w.in)), ix);
            flat = nb.create<arith::IndexCastOp>(l, nb.getI64Type(), flat);
            nb.create<linalg::YieldOp>(
                l,
                ValueRange{nb.create<arith::SelectOp>(l, better, v, a[1]),
                           nb.create<arith::SelectOp>(l, better, flat, a[2])});
          });
      where = argmax.getResult(1);
    }

    // Gather (n, h, w, c, a, b): window tap kh = KH-1-a, so the windows
    // that touch (h, w) come in increasing (oh, ow), the kernel's order.
    Value zeros = filledTensor(b, loc, outType, 0);
    Value r = windowGeneric(
        b, loc, zeros, {window}, {winMap}, 6,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value kh = nb.create<arith::SubIOp>(l, cIdx(nb, l, h.window - 1),
                                              index(nb, l, 4));
          Value kw = nb.create<arith::SubIOp>(l, cIdx(nb, l, w.window - 1),
                                              index(nb, l, 5));
          auto [oh, okH] = sourceOf(nb, l, index(nb, l, 1), kh, h);
          auto [ow, okW] = sourceOf(nb, l, index(nb, l, 2), kw, w);
          Value ok = nb.create<arith::AndIOp>(l, okH, okW);
          SmallVector<Value> at = {index(nb, l, 0), oh, ow, index(nb, l, 3)};
          Value g = nb.create<tensor::ExtractOp>(l, dy, at);
          if (isMaxGrad) {
            Value flat = nb.create<arith::AddIOp>(
                l,
                nb.create<arith::MulIOp>(l, index(nb, l, 1), cIdx(nb, l, w.in)),
                index(nb, l, 2));
            flat = nb.create<arith::IndexCastOp>(l, nb.getI64Type(), flat);
            Value winner = nb.create<tensor::ExtractOp>(l, where, at);
            ok = nb.create<arith::AndIOp>(
                l, ok,
                nb.create<arith::CmpIOp>(l, arith::CmpIPredicate::eq, winner,
                                         flat));
          } else {
            g = nb.create<arith::MulFOp>(
                l, g, inverseCount(nb, l, elt, oh, ow, h, w));
          }
          Value term = nb.create<arith::SelectOp>(
              l, ok, g, scalarConstant(nb, l, elt, 0));
          return nb.create<arith::AddFOp>(l, a[1], term);
        });
    b.replaceOp(op, r);
    return success();
  }
};

struct KcCudaLowerWindowOpsPass
    : public kcc::impl::KcCudaLowerWindowOpsBase<KcCudaLowerWindowOpsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalOp<kc::Conv2DOp, kc::Conv2DBackpropInputOp,
                        kc::Conv2DBackpropFilterOp, kc::MaxPool2DOp,
                        kc::AvgPool2DOp, kc::MaxPool2DGradOp,
                        kc::AvgPool2DGradOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    patterns.add<
        ConvLowering<kc::Conv2DOp>, ConvLowering<kc::Conv2DBackpropInputOp>,
        ConvLowering<kc::Conv2DBackpropFilterOp>, PoolLowering<kc::MaxPool2DOp>,
        PoolLowering<kc::AvgPool2DOp>, PoolLowering<kc::MaxPool2DGradOp>,
        PoolLowering<kc::AvgPool2DGradOp>>(ctx);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
