//===- RecurrenceVectorBuilder.h - f32 vector IR for the cells --*- C++ -*-===//
//
// The builder the generated recurrent steps are written with: index
// arithmetic, f32 vectors of any width up to one register (a run of w
// elements lives in a vector of the next power of two of lanes; memory sees
// only the w elements, through masked loads and stores), loads and stores at
// flat offsets of 1-d memrefs, the activations, and the loops the steps
// nest. Every call creates its ops at the builder's insertion point, in
// call order: the IR is the sequence of calls.
//
// VectorCellOps adapts it to the Ops of runtime/kernels/RecurrentCells.h, so
// the cell equations the kernel library runs on scalars build vector IR
// here.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_LOWERING_RECURRENCEVECTORBUILDER_H
#define KCC_CODEGEN_LOWERING_RECURRENCEVECTORBUILDER_H

#include "runtime/kernels/Recurrence.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace kcc {
namespace codegen {
namespace recurrence {

/// Builds index arithmetic and f32 vector arithmetic at `builder`'s
/// insertion point. The width of a vector value is its type's.
struct VectorBuilder {
  mlir::OpBuilder &builder;
  mlir::Location loc;
  mlir::Type f32;

  VectorBuilder(mlir::OpBuilder &builder, mlir::Location loc)
      : builder(builder), loc(loc), f32(builder.getF32Type()) {}

  // Indices.
  mlir::Value index(int64_t v) {
    return builder.create<mlir::arith::ConstantIndexOp>(loc, v);
  }
  mlir::Value add(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::AddIOp>(loc, a, c);
  }
  mlir::Value add(mlir::Value a, int64_t c) { return c ? add(a, index(c)) : a; }
  mlir::Value sub(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::SubIOp>(loc, a, c);
  }
  mlir::Value mul(mlir::Value a, int64_t c) {
    return c == 1 ? a : builder.create<mlir::arith::MulIOp>(loc, a, index(c));
  }
  mlir::Value mul(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::MulIOp>(loc, a, c);
  }

  // Vectors. A run of w elements (w <= 16) lives in a vector of lanes(w),
  // the next power of two, so every operation is on a whole register.
  static int64_t lanes(int64_t w) { return llvm::PowerOf2Ceil(w); }
  mlir::VectorType vec(int64_t w) {
    return mlir::VectorType::get({lanes(w)}, f32);
  }
  static int64_t width(mlir::Value v) {
    return mlir::cast<mlir::VectorType>(v.getType()).getDimSize(0);
  }
  /// The mask of the first w lanes of a vector of lanes(w).
  mlir::Value mask(int64_t w);
  /// w elements of `mem` from `offset` (masked when w is not lanes(w)).
  mlir::Value load(mlir::Value mem, mlir::Value offset, int64_t w);
  /// Stores the first w lanes of v.
  void store(mlir::Value v, mlir::Value mem, mlir::Value offset, int64_t w);
  /// One element.
  mlir::Value scalar(mlir::Value mem, mlir::Value offset) {
    return builder.create<mlir::memref::LoadOp>(loc, mem,
                                                mlir::ValueRange{offset});
  }
  mlir::Value splat(mlir::Value s, int64_t w) {
    return builder.create<mlir::vector::BroadcastOp>(loc, vec(w), s);
  }
  /// A vector of w lanes (rounded up), all `v`.
  mlir::Value constant(double v, int64_t w);
  mlir::Value constant(double v, mlir::Value like) {
    return constant(v, width(like));
  }
  mlir::Value fadd(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::AddFOp>(loc, a, c);
  }
  mlir::Value fsub(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::SubFOp>(loc, a, c);
  }
  mlir::Value fmul(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::MulFOp>(loc, a, c);
  }
  mlir::Value fdiv(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::DivFOp>(loc, a, c);
  }
  mlir::Value fma(mlir::Value a, mlir::Value c, mlir::Value acc) {
    return builder.create<mlir::vector::FMAOp>(loc, a, c, acc);
  }
  mlir::Value lt(mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::CmpFOp>(
        loc, mlir::arith::CmpFPredicate::OLT, a, c);
  }
  mlir::Value gt(mlir::Value a, mlir::Value c) { return lt(c, a); }
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value c) {
    return builder.create<mlir::arith::SelectOp>(loc, cond, a, c);
  }
  /// std::max(a, c) and std::min(a, c): the first operand unless the
  /// comparison holds (as the kernel library's clamps).
  mlir::Value max(mlir::Value a, mlir::Value c) {
    return select(lt(a, c), c, a);
  }
  mlir::Value min(mlir::Value a, mlir::Value c) {
    return select(lt(c, a), c, a);
  }

  /// tanh as the kernel library's (runtime/kernels/Tanh.h).
  mlir::Value tanh(mlir::Value in);
  /// exp(x) as the kernel library computes it (runtime/kernels/Exp.h).
  mlir::Value exp(mlir::Value in);

  /// The activations of the compiled cells, and their derivatives from the
  /// activation's output y: the one place they are chosen.
  mlir::Value activate(kernels::RecurrentActivation a, mlir::Value x);
  mlir::Value activationGrad(kernels::RecurrentActivation a, mlir::Value y);

  /// Calls body(start, count) on blocks of `block` items covering
  /// [0, total): an scf.for over the full blocks (inline when there is
  /// one), then the remainder once with its own static count.
  void forBlocks(int64_t total, int64_t block,
                 llvm::function_ref<void(mlir::Value, int64_t)> body);

  /// scf.for over [lb, ub) carrying `init`; body returns the next values.
  llvm::SmallVector<mlir::Value>
  forAcc(int64_t lb, int64_t ub, mlir::ValueRange init,
         llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::Value,
                                                           mlir::ValueRange)>
             body);

  /// A serial loop over [lb, ub) whose body gets the index.
  void forEach(mlir::Value lb, mlir::Value ub,
               llvm::function_ref<void(mlir::Value)> body);
};

/// The Ops of the cell equations (runtime/kernels/RecurrentCells.h) on f32
/// vectors: each operation emits its op through the VectorBuilder.
struct VectorCellOps {
  using Value = mlir::Value;
  VectorBuilder &vb;

  Value add(Value a, Value c) { return vb.fadd(a, c); }
  Value sub(Value a, Value c) { return vb.fsub(a, c); }
  Value mul(Value a, Value c) { return vb.fmul(a, c); }
  Value constant(double v, Value like) { return vb.constant(v, like); }
  Value activate(kernels::RecurrentActivation a, Value x) {
    return vb.activate(a, x);
  }
  Value activationGrad(kernels::RecurrentActivation a, Value y) {
    return vb.activationGrad(a, y);
  }
};

} // namespace recurrence
} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_RECURRENCEVECTORBUILDER_H
