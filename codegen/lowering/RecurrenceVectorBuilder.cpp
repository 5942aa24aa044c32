//===- RecurrenceVectorBuilder.cpp - f32 vector IR for the cells ----------===//
//
// The larger builders of RecurrenceVectorBuilder.h: masked memory access,
// exp, the activations and the loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/RecurrenceVectorBuilder.h"
#include "codegen/lowering/ExpandMath.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen::recurrence;

using Act = kernels::RecurrentActivation;

Value VectorBuilder::tanh(Value in) {
  return codegen::buildTanhF32(builder, loc, in);
}

Value VectorBuilder::mask(int64_t w) {
  return builder.create<vector::ConstantMaskOp>(
      loc, VectorType::get({lanes(w)}, builder.getI1Type()),
      builder.getI64ArrayAttr({w}));
}

Value VectorBuilder::load(Value mem, Value offset, int64_t w) {
  if (lanes(w) == w)
    return builder.create<vector::LoadOp>(loc, vec(w), mem, ValueRange{offset});
  return builder.create<vector::MaskedLoadOp>(
      loc, vec(w), mem, ValueRange{offset}, mask(w), constant(0.0, w));
}

void VectorBuilder::store(Value v, Value mem, Value offset, int64_t w) {
  if (width(v) == w)
    builder.create<vector::StoreOp>(loc, v, mem, ValueRange{offset});
  else
    builder.create<vector::MaskedStoreOp>(loc, mem, ValueRange{offset}, mask(w),
                                          v);
}

Value VectorBuilder::constant(double v, int64_t w) {
  return builder.create<arith::ConstantOp>(
      loc, DenseElementsAttr::get(vec(w), builder.getF32FloatAttr(v)));
}

/// exp(x) as the kernel library computes it (runtime/kernels/Exp.h).
Value VectorBuilder::exp(Value in) {
  return codegen::buildExpF32(builder, loc, in);
}

Value VectorBuilder::activate(Act a, Value x) {
  switch (a) {
  case Act::Tanh:
    return tanh(x);
  case Act::Sigmoid: {
    Value one = constant(1.0, x);
    return fdiv(one, fadd(one, exp(builder.create<arith::NegFOp>(loc, x))));
  }
  case Act::Relu:
    return select(gt(x, constant(0.0, x)), x, constant(0.0, x));
  case Act::Linear:
    return x;
  case Act::HardSigmoid:
    return min(constant(1.0, x),
               max(constant(0.0, x),
                   fadd(fdiv(x, constant(6.0, x)), constant(0.5, x))));
  }
  return x;
}

Value VectorBuilder::activationGrad(Act a, Value y) {
  switch (a) {
  case Act::Tanh:
    return fsub(constant(1.0, y), fmul(y, y));
  case Act::Sigmoid:
    return fmul(y, fsub(constant(1.0, y), y));
  case Act::Relu:
    return select(gt(y, constant(0.0, y)), constant(1.0, y), constant(0.0, y));
  case Act::Linear:
    return constant(1.0, y);
  case Act::HardSigmoid: {
    Value inside = builder.create<arith::AndIOp>(loc, gt(y, constant(0.0, y)),
                                                 lt(y, constant(1.0, y)));
    return select(inside, constant(1.0 / 6.0, y), constant(0.0, y));
  }
  }
  return constant(1.0, y);
}

void VectorBuilder::forBlocks(int64_t total, int64_t block,
                              function_ref<void(Value, int64_t)> body) {
  int64_t full = total / block, rest = total % block;
  if (full == 1) {
    body(index(0), block);
  } else if (full > 1) {
    auto loop = builder.create<scf::ForOp>(loc, index(0), index(full * block),
                                           index(block));
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar(), block);
  }
  if (rest)
    body(index(full * block), rest);
}

SmallVector<Value> VectorBuilder::forAcc(
    int64_t lb, int64_t ub, ValueRange init,
    function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  auto loop = builder.create<scf::ForOp>(
      loc, index(lb), index(ub), index(1), init,
      [&](OpBuilder &, Location l, Value iv, ValueRange acc) {
        SmallVector<Value> next = body(iv, acc);
        builder.create<scf::YieldOp>(l, next);
      });
  return SmallVector<Value>(loop.getResults());
}

void VectorBuilder::forEach(Value lb, Value ub,
                            function_ref<void(Value)> body) {
  auto loop = builder.create<scf::ForOp>(loc, lb, ub, index(1));
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(loop.getBody());
  body(loop.getInductionVar());
}
