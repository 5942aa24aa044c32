//===- GradientBuilder.h - Helpers for writing kc gradient rules -*- C++
//-*-===//
//
// The gradient rules (ir/gradients/*.cpp) build many small kc ops with static
// result types. GradientBuilder spells each one in a line, derives the result
// type, and stamps every op with the forward op's gradient location, so a
// rule reads like the math it implements.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_IR_GRADIENTS_GRADIENTBUILDER_H
#define KCC_IR_GRADIENTS_GRADIENTBUILDER_H

#include "ir/KcDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace kcc {
namespace kc {

/// The location of the gradient ops of `op`: its name with "/grad" appended
/// when the location is a NameLoc (`loc("dense_1")` gives
/// `loc("dense_1/grad"(...))`), else a NameLoc "grad" wrapping it. Either way
/// the forward location stays inside as the child, so the source position
/// and the layer name both survive into the backward pass.
inline mlir::Location gradientLoc(mlir::Operation *op) {
  mlir::Location loc = op->getLoc();
  mlir::MLIRContext *ctx = op->getContext();
  if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc))
    return mlir::NameLoc::get(
        mlir::StringAttr::get(ctx, name.getName().getValue() + "/grad"),
        name.getChildLoc());
  return mlir::NameLoc::get(mlir::StringAttr::get(ctx, "grad"), loc);
}

/// Builds kc ops at the builder's insertion point with one location.
class GradientBuilder {
public:
  GradientBuilder(mlir::OpBuilder &b, mlir::Operation *forward)
      : b(b), loc(gradientLoc(forward)) {}

  static mlir::RankedTensorType typeOf(mlir::Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType());
  }
  static llvm::ArrayRef<int64_t> shapeOf(mlir::Value v) {
    return typeOf(v).getShape();
  }
  static bool isFloat(mlir::Value v) {
    return mlir::isa<mlir::FloatType>(typeOf(v).getElementType());
  }

  /// A splat constant of `type` (float or integer elements).
  mlir::Value constant(mlir::Type type, double value) {
    auto tensor = mlir::cast<mlir::RankedTensorType>(type);
    mlir::Type elem = tensor.getElementType();
    mlir::Attribute scalar;
    if (mlir::isa<mlir::FloatType>(elem))
      scalar = b.getFloatAttr(elem, value);
    else
      scalar = b.getIntegerAttr(elem, static_cast<int64_t>(value));
    return b.create<ConstantOp>(
        loc, mlir::DenseElementsAttr::get(tensor, llvm::ArrayRef(scalar)));
  }
  mlir::Value zerosLike(mlir::Value v) { return constant(v.getType(), 0.0); }
  /// A splat of `value` shaped like `v`.
  mlir::Value like(mlir::Value v, double value) {
    return constant(v.getType(), value);
  }

  template <typename OpT> mlir::Value binary(mlir::Value x, mlir::Value y) {
    return b.create<OpT>(loc, x.getType(), x, y);
  }
  mlir::Value add(mlir::Value x, mlir::Value y) { return binary<AddOp>(x, y); }
  mlir::Value sub(mlir::Value x, mlir::Value y) { return binary<SubOp>(x, y); }
  mlir::Value mul(mlir::Value x, mlir::Value y) { return binary<MulOp>(x, y); }
  mlir::Value div(mlir::Value x, mlir::Value y) { return binary<DivOp>(x, y); }
  mlir::Value pow(mlir::Value x, mlir::Value y) { return binary<PowOp>(x, y); }
  /// x * c for a scalar c.
  mlir::Value scale(mlir::Value x, double c) { return mul(x, like(x, c)); }

  template <typename OpT> mlir::Value unary(mlir::Value x) {
    return b.create<OpT>(loc, x.getType(), x);
  }
  mlir::Value neg(mlir::Value x) { return unary<NegOp>(x); }
  mlir::Value exp(mlir::Value x) { return unary<ExpOp>(x); }
  mlir::Value log(mlir::Value x) { return unary<LogOp>(x); }
  mlir::Value tanh(mlir::Value x) { return unary<TanhOp>(x); }
  mlir::Value abs(mlir::Value x) { return unary<AbsOp>(x); }

  mlir::Value compare(CompareDirection dir, mlir::Value x, mlir::Value y) {
    auto maskType = typeOf(x).clone(b.getI1Type());
    return b.create<CompareOp>(loc, maskType, dir, x, y);
  }
  mlir::Value select(mlir::Value cond, mlir::Value onTrue,
                     mlir::Value onFalse) {
    return b.create<SelectOp>(loc, onTrue.getType(), cond, onTrue, onFalse);
  }
  /// `cond ? x : 0`.
  mlir::Value selectOrZero(mlir::Value cond, mlir::Value x) {
    return select(cond, x, zerosLike(x));
  }
  mlir::Value cast(mlir::Value x, mlir::Type elementType) {
    return b.create<CastOp>(loc, typeOf(x).clone(elementType), x);
  }

  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    if (shapeOf(x) == shape)
      return x;
    return b.create<ReshapeOp>(loc, typeOf(x).clone(shape), x);
  }
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape) {
    if (shapeOf(x) == shape)
      return x;
    return b.create<BroadcastToOp>(loc, typeOf(x).clone(shape), x);
  }
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm) {
    llvm::SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(shapeOf(x)[p]);
    return b.create<TransposeOp>(loc, typeOf(x).clone(shape), x,
                                 b.getDenseI64ArrayAttr(perm));
  }
  mlir::Value slice(mlir::Value x, llvm::ArrayRef<int64_t> start,
                    llvm::ArrayRef<int64_t> limit,
                    llvm::ArrayRef<int64_t> strides) {
    llvm::SmallVector<int64_t> shape;
    for (size_t d = 0; d < start.size(); ++d)
      shape.push_back((limit[d] - start[d] + strides[d] - 1) / strides[d]);
    if (llvm::ArrayRef<int64_t>(shape) == shapeOf(x))
      return x;
    return b.create<SliceOp>(
        loc, typeOf(x).clone(shape), x, b.getDenseI64ArrayAttr(start),
        b.getDenseI64ArrayAttr(limit), b.getDenseI64ArrayAttr(strides));
  }
  /// Joins `inputs` along `axis`; a single input is returned as is.
  mlir::Value concat(llvm::ArrayRef<mlir::Value> inputs, int64_t axis) {
    if (inputs.size() == 1)
      return inputs.front();
    llvm::SmallVector<int64_t> shape(shapeOf(inputs.front()));
    shape[axis] = 0;
    for (mlir::Value in : inputs)
      shape[axis] += shapeOf(in)[axis];
    return b.create<ConcatOp>(loc, typeOf(inputs.front()).clone(shape), inputs,
                              b.getI64IntegerAttr(axis));
  }
  mlir::Value reduceSum(mlir::Value x, llvm::ArrayRef<int64_t> axes,
                        bool keepdims) {
    llvm::SmallVector<int64_t> shape;
    for (auto [d, size] : llvm::enumerate(shapeOf(x))) {
      if (!llvm::is_contained(axes, static_cast<int64_t>(d)))
        shape.push_back(size);
      else if (keepdims)
        shape.push_back(1);
    }
    return b.create<ReduceSumOp>(loc, typeOf(x).clone(shape), x,
                                 b.getDenseI64ArrayAttr(axes),
                                 b.getBoolAttr(keepdims));
  }
  /// Spreads a reduction's result (or its gradient) `g` back over the input
  /// shape `xShape`: restores the reduced dims as 1s, then broadcasts.
  mlir::Value unreduce(mlir::Value g, llvm::ArrayRef<int64_t> xShape,
                       llvm::ArrayRef<int64_t> axes) {
    llvm::SmallVector<int64_t> kept(xShape);
    for (int64_t a : axes)
      kept[a] = 1;
    return broadcastTo(reshape(g, kept), xShape);
  }

  mlir::OpBuilder &builder() { return b; }
  mlir::Location location() const { return loc; }

private:
  mlir::OpBuilder &b;
  mlir::Location loc;
};

} // namespace kc
} // namespace kcc

#endif // KCC_IR_GRADIENTS_GRADIENTBUILDER_H
