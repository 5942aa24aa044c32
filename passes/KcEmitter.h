//===- KcEmitter.h - Terse builder for kc tensor math -----------*- C++ -*-===//
//
// The loss and optimizer builders write a lot of small tensor formulas
// (`m + (g - m) * (1 - b1)`). KcEmitter wraps an OpBuilder and a location so
// each term is one call, and turns a scalar into a splat constant or a
// broadcast of the right type, since kc has no implicit broadcasting.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_KCEMITTER_H
#define KCC_PASSES_KCEMITTER_H

#include "ir/KcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace kcc {

class KcEmitter {
public:
  KcEmitter(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

  static mlir::RankedTensorType typeOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }

  /// A float constant of `type` with every element `value`.
  mlir::Value splat(mlir::RankedTensorType type, double value) {
    auto attr = mlir::DenseElementsAttr::get(
        type, mlir::FloatAttr::get(type.getElementType(), value));
    return b.create<kc::ConstantOp>(loc, attr);
  }
  /// A splat constant shaped like `like`.
  mlir::Value splatLike(mlir::Value like, double value) {
    return splat(typeOf(like), value);
  }
  /// A rank-0 float constant.
  mlir::Value scalar(mlir::Type elementType, double value) {
    return splat(mlir::RankedTensorType::get({}, elementType), value);
  }
  /// Broadcasts `x` to the type of `like` (no-op when the types match).
  mlir::Value broadcastLike(mlir::Value x, mlir::Value like) {
    if (x.getType() == like.getType())
      return x;
    return b.create<kc::BroadcastToOp>(loc, like.getType(), x);
  }
  /// Converts the element type of `x` (no-op when it already has it).
  mlir::Value cast(mlir::Value x, mlir::Type elementType) {
    mlir::RankedTensorType t = typeOf(x);
    if (t.getElementType() == elementType)
      return x;
    return b.create<kc::CastOp>(loc, t.clone(elementType), x);
  }

  mlir::Value add(mlir::Value l, mlir::Value r) { return bin<kc::AddOp>(l, r); }
  mlir::Value sub(mlir::Value l, mlir::Value r) { return bin<kc::SubOp>(l, r); }
  mlir::Value mul(mlir::Value l, mlir::Value r) { return bin<kc::MulOp>(l, r); }
  mlir::Value div(mlir::Value l, mlir::Value r) { return bin<kc::DivOp>(l, r); }
  mlir::Value pow(mlir::Value l, mlir::Value r) { return bin<kc::PowOp>(l, r); }
  mlir::Value max(mlir::Value l, mlir::Value r) { return bin<kc::MaxOp>(l, r); }
  mlir::Value min(mlir::Value l, mlir::Value r) { return bin<kc::MinOp>(l, r); }
  /// `x * c` with a compile-time constant `c`.
  mlir::Value mul(mlir::Value x, double c) { return mul(x, splatLike(x, c)); }
  mlir::Value add(mlir::Value x, double c) { return add(x, splatLike(x, c)); }

  mlir::Value neg(mlir::Value x) { return un<kc::NegOp>(x); }
  mlir::Value exp(mlir::Value x) { return un<kc::ExpOp>(x); }
  mlir::Value log(mlir::Value x) { return un<kc::LogOp>(x); }
  mlir::Value sqrt(mlir::Value x) { return un<kc::SqrtOp>(x); }
  mlir::Value abs(mlir::Value x) { return un<kc::AbsOp>(x); }
  mlir::Value relu(mlir::Value x) { return un<kc::ReluOp>(x); }
  mlir::Value rsqrt(mlir::Value x) { return un<kc::RsqrtOp>(x); }
  mlir::Value sigmoid(mlir::Value x) { return un<kc::SigmoidOp>(x); }
  /// `c - x` with a compile-time constant `c`.
  mlir::Value rsub(double c, mlir::Value x) { return sub(splatLike(x, c), x); }
  /// `x` clipped to [lo, hi] (zero gradient where clipped).
  mlir::Value clip(mlir::Value x, double lo, double hi) {
    return min(max(x, splatLike(x, lo)), splatLike(x, hi));
  }

  /// An elementwise comparison: an i1 tensor of `l`'s shape.
  mlir::Value compare(kc::CompareDirection dir, mlir::Value l, mlir::Value r) {
    return b.create<kc::CompareOp>(loc, typeOf(l).clone(b.getI1Type()), dir, l,
                                   r);
  }
  /// `cond ? t : f`, element by element.
  mlir::Value select(mlir::Value cond, mlir::Value t, mlir::Value f) {
    return b.create<kc::SelectOp>(loc, t.getType(), cond, t, f);
  }

  /// Sum over every element: a rank-0 tensor.
  mlir::Value sumAll(mlir::Value x) { return reduceAll<kc::ReduceSumOp>(x); }

  /// Sum over the last axis, dropping it (or keeping it as size 1).
  mlir::Value sumLastAxis(mlir::Value x, bool keepdims) {
    mlir::RankedTensorType t = typeOf(x);
    llvm::SmallVector<int64_t> shape(t.getShape());
    if (keepdims)
      shape.back() = 1;
    else
      shape.pop_back();
    return b.create<kc::ReduceSumOp>(loc, t.clone(shape), x,
                                     b.getDenseI64ArrayAttr({t.getRank() - 1}),
                                     b.getBoolAttr(keepdims));
  }
  /// Mean over every element: a rank-0 tensor.
  mlir::Value meanAll(mlir::Value x) { return reduceAll<kc::ReduceMeanOp>(x); }

  /// Sum, mean or max over `axis` (negative counts from the end), dropping
  /// it or keeping it as size 1.
  mlir::Value sumAxis(mlir::Value x, int64_t axis, bool keepdims) {
    return reduceAxis<kc::ReduceSumOp>(x, axis, keepdims);
  }
  mlir::Value meanAxis(mlir::Value x, int64_t axis, bool keepdims) {
    return reduceAxis<kc::ReduceMeanOp>(x, axis, keepdims);
  }
  mlir::Value maxAxis(mlir::Value x, int64_t axis, bool keepdims) {
    return reduceAxis<kc::ReduceMaxOp>(x, axis, keepdims);
  }

private:
  template <typename Op> mlir::Value bin(mlir::Value l, mlir::Value r) {
    return b.create<Op>(loc, l.getType(), l, r);
  }
  template <typename Op> mlir::Value un(mlir::Value x) {
    return b.create<Op>(loc, x.getType(), x);
  }
  /// `Op` (kc.reduce_sum or kc.reduce_mean) over every axis of `x`, to a
  /// rank-0 tensor; a rank-0 `x` is returned as it is.
  template <typename Op> mlir::Value reduceAll(mlir::Value x) {
    mlir::RankedTensorType t = typeOf(x);
    if (t.getRank() == 0)
      return x;
    llvm::SmallVector<int64_t> axes;
    for (int64_t i = 0; i < t.getRank(); ++i)
      axes.push_back(i);
    return b.create<Op>(loc, t.clone(llvm::ArrayRef<int64_t>{}), x,
                        b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
  }

  template <typename Op>
  mlir::Value reduceAxis(mlir::Value x, int64_t axis, bool keepdims) {
    mlir::RankedTensorType t = typeOf(x);
    if (axis < 0)
      axis += t.getRank();
    llvm::SmallVector<int64_t> shape(t.getShape());
    if (keepdims)
      shape[axis] = 1;
    else
      shape.erase(shape.begin() + axis);
    return b.create<Op>(loc, t.clone(shape), x, b.getDenseI64ArrayAttr({axis}),
                        b.getBoolAttr(keepdims));
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace kcc

#endif // KCC_PASSES_KCEMITTER_H
