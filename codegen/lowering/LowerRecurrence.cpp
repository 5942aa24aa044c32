//===- LowerRecurrence.cpp - kc.recurrence as generated loops over time ---===//
//
// kc.recurrence and kc.recurrence_grad (layouts in runtime/kernels/
// Recurrence.h) become a loop over time in the IR, so the module's size does
// not depend on T.
//
// In f32 the steps of every cell (LSTM, GRU with reset_after true or false,
// SimpleRNN) are generated here: the compiler knows B, H, the cell and its
// activations, so a step is a few loop nests specialized to them, on the
// calling thread (no OpenMP team per step), with no call per step:
//
//   forward, per block of 4 batch rows and 16 units: the recurrent product
//     h_prev . U of every gate accumulates in vector registers (from the
//     input projection row), each row of U loaded once for the 4 rows; the
//     gate arithmetic follows in the same nest, row by row, while the
//     block is in L1, and writes the states row once;
//   backward, per block of rows: the gate gradients from the saved states
//     row, the carries and the states' gradient, written as the step's d x
//     row; the carry d h = d z . U^T in registers, from U^T transposed once
//     before the loop; then, per step, d U += h_prev^T . d z and d rbias +=
//     sum d z with 4 rows of d U in registers over the batch.
//
// The states' gradient is read only where it can be nonzero: it is usually
// the gradient of a slice of the states (the last h, every h), zeros joined
// by kc.concat, which the compiler sees and the interpreter, running one op
// at a time, has to build as a [T, B, S] buffer (GradStates below).
//
// Each recurrence is an internal function called once per sequence, shared
// by the recurrences with the same cell, sizes and (backward) nonzero
// gradient parts: the direction is an argument, so the two directions of a
// Bidirectional layer, and the forward of @forward and of @train_step, are
// compiled once. Runs of fewer than 16 units use a whole register (the next
// power of two of lanes) with masked loads and stores.
//
// Step 0 reads the initial state where the others read the previous states
// row: a select of the buffer, so the step is emitted once. The activations
// are the kernel library's: the same rational tanh, sigmoid as
// 1 / (1 + exp(-x)) with a Cephes-style polynomial exp (a few ulp from
// libm's), relu, linear and hard_sigmoid, so compiled and interpreted steps
// agree to rounding (tests/unit/codegen/CompiledRecurrenceTest.cpp).
//
// f64 (the gradient checks) and recurrent kernels beyond 256 KiB (LSTM
// H > 128, where a block of rows would stream U from L2 every step) loop
// over the step entry points of runtime/LibraryCalls.h instead: the
// interpreter's arithmetic, oneDNN for the large products.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/ExpandMath.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcDialect.h"
#include "ir/Recurrence.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "kc-lower-to-linalg"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;

namespace {

using Act = kernels::RecurrentActivation;

//===----------------------------------------------------------------------===//
// The library-call loop (every cell and type)
//===----------------------------------------------------------------------===//

/// A loop over time in the IR whose body is one call of the step entry
/// point (runtime/kernels/Recurrence.h). The states buffer is allocated
/// once, before the loop, so the arena holds the [T, B, S] values the
/// backward reads. The backward runs its loop from the last step down.
template <typename OpTy>
LogicalResult emitStepLoop(OpTy op, StringRef base, ValueRange inputs,
                           bool backward, int64_t steps, int64_t batch,
                           int64_t units,
                           ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  FailureOr<kernels::RecurrenceParams> p = kc::recurrenceParams(op);
  if (failed(p))
    return failure();
  auto outType = cast<RankedTensorType>(op.getType());
  Type elt = outType.getElementType();
  if (!elt.isF32() && !elt.isF64())
    return rewriter.notifyMatchFailure(op, "library calls take f32 or f64");
  std::string name =
      (kLibraryCallPrefix + base + (elt.isF32() ? "_f32" : "_f64")).str();

  SmallVector<Value> args;
  for (Value in : inputs) {
    auto t = cast<RankedTensorType>(in.getType());
    Value m = rewriter.create<bufferization::ToMemrefOp>(
        loc, MemRefType::get(t.getShape(), t.getElementType()), in,
        /*read_only=*/true);
    args.push_back(dataPointer(rewriter, loc, m));
  }
  Value out = rewriter.create<memref::AllocOp>(
      loc, MemRefType::get(outType.getShape(), elt),
      rewriter.getI64IntegerAttr(64));
  args.push_back(dataPointer(rewriter, loc, out));
  auto i64 = [&](int64_t v) -> Value {
    return rewriter.create<arith::ConstantOp>(loc,
                                              rewriter.getI64IntegerAttr(v));
  };
  SmallVector<Value> trailing = {
      i64(steps),
      i64(batch),
      i64(units),
      i64(static_cast<int64_t>(p->cell)),
      i64(p->resetAfter),
      i64(static_cast<int64_t>(p->activation)),
      i64(static_cast<int64_t>(p->recurrentActivation)),
      i64(p->reverse)};

  SmallVector<Type> types(ValueRange(args).getTypes());
  types.append(1 + trailing.size(), rewriter.getI64Type());
  auto fnType = rewriter.getFunctionType(types, {});
  func::FuncOp callee =
      codegen::getOrDeclare(rewriter, op->template getParentOfType<ModuleOp>(), name,
                   fnType);
  if (callee.getFunctionType() != fnType)
    return op.emitOpError("conflicting declaration of ") << name;

  Value lb = rewriter.create<arith::ConstantIndexOp>(loc, 0);
  Value ub = rewriter.create<arith::ConstantIndexOp>(loc, steps);
  Value one = rewriter.create<arith::ConstantIndexOp>(loc, 1);
  Value last = i64(steps - 1);
  rewriter.create<scf::ForOp>(
      loc, lb, ub, one, ValueRange(),
      [&](OpBuilder &b, Location l, Value iv, ValueRange) {
        Value i = b.create<arith::IndexCastOp>(l, b.getI64Type(), iv);
        Value step = backward ? b.create<arith::SubIOp>(l, last, i) : i;
        SmallVector<Value> callArgs(args);
        callArgs.push_back(step);
        callArgs.append(trailing);
        b.create<func::CallOp>(l, callee, callArgs);
        b.create<scf::YieldOp>(l);
      });
  rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
      op, outType, out, /*restrict=*/true, /*writable=*/true);
  return success();
}

//===----------------------------------------------------------------------===//
// Generated steps: builders on f32 vectors
//===----------------------------------------------------------------------===//

/// Lanes of the widest vector the steps use (one AVX-512 register of f32).
constexpr int64_t kLanes = 16;
/// Batch rows a block of the forward and of the carry's product works on:
/// each load of U serves this many rows.
constexpr int64_t kRows = 4;
/// Rows of d U kept in registers while the batch is summed.
constexpr int64_t kGradRows = 4;
/// The largest recurrent kernel generated here (bytes): beyond it the rows
/// stream U from memory and oneDNN's blocked products are faster.
constexpr int64_t kMaxKernelBytes = 256 * 1024;

/// Builders for the generated steps: index arithmetic, f32 vectors of any
/// width (the width of a value is its vector type's), loads and stores at
/// flat offsets of 1-d memrefs.
struct Gen {
  OpBuilder &b;
  Location loc;
  Type f32;

  Gen(OpBuilder &b, Location loc) : b(b), loc(loc), f32(b.getF32Type()) {}

  // Indices.
  Value idx(int64_t v) { return b.create<arith::ConstantIndexOp>(loc, v); }
  Value add(Value a, Value c) { return b.create<arith::AddIOp>(loc, a, c); }
  Value add(Value a, int64_t c) { return c ? add(a, idx(c)) : a; }
  Value sub(Value a, Value c) { return b.create<arith::SubIOp>(loc, a, c); }
  Value mul(Value a, int64_t c) {
    return c == 1 ? a : b.create<arith::MulIOp>(loc, a, idx(c));
  }
  Value mul(Value a, Value c) { return b.create<arith::MulIOp>(loc, a, c); }

  // Vectors. A run of w elements (w <= kLanes) lives in a vector of
  // lanes(w), the next power of two, so every operation is on a whole
  // register; memory sees only the w elements (masked loads and stores).
  static int64_t lanes(int64_t w) { return llvm::PowerOf2Ceil(w); }
  VectorType vec(int64_t w) { return VectorType::get({lanes(w)}, f32); }
  static int64_t width(Value v) {
    return cast<VectorType>(v.getType()).getDimSize(0);
  }
  Value mask(int64_t w) {
    return b.create<vector::ConstantMaskOp>(
        loc, VectorType::get({lanes(w)}, b.getI1Type()),
        b.getI64ArrayAttr({w}));
  }
  Value load(Value mem, Value off, int64_t w) {
    if (lanes(w) == w)
      return b.create<vector::LoadOp>(loc, vec(w), mem, ValueRange{off});
    return b.create<vector::MaskedLoadOp>(loc, vec(w), mem, ValueRange{off},
                                          mask(w), cst(0.0, w));
  }
  /// Stores the first w lanes of v.
  void store(Value v, Value mem, Value off, int64_t w) {
    if (width(v) == w)
      b.create<vector::StoreOp>(loc, v, mem, ValueRange{off});
    else
      b.create<vector::MaskedStoreOp>(loc, mem, ValueRange{off}, mask(w), v);
  }
  Value scalar(Value mem, Value off) {
    return b.create<memref::LoadOp>(loc, mem, ValueRange{off});
  }
  Value splat(Value s, int64_t w) {
    return b.create<vector::BroadcastOp>(loc, vec(w), s);
  }
  Value cst(double v, int64_t w) {
    return b.create<arith::ConstantOp>(
        loc, DenseElementsAttr::get(vec(w), b.getF32FloatAttr(v)));
  }
  Value cst(double v, Value like) { return cst(v, width(like)); }
  Value fadd(Value a, Value c) { return b.create<arith::AddFOp>(loc, a, c); }
  Value fsub(Value a, Value c) { return b.create<arith::SubFOp>(loc, a, c); }
  Value fmul(Value a, Value c) { return b.create<arith::MulFOp>(loc, a, c); }
  Value fdiv(Value a, Value c) { return b.create<arith::DivFOp>(loc, a, c); }
  Value fma(Value a, Value c, Value acc) {
    return b.create<vector::FMAOp>(loc, a, c, acc);
  }
  Value lt(Value a, Value c) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, a, c);
  }
  Value gt(Value a, Value c) { return lt(c, a); }
  Value select(Value cond, Value a, Value c) {
    return b.create<arith::SelectOp>(loc, cond, a, c);
  }
  /// std::max(a, c) and std::min(a, c): the first operand unless the
  /// comparison holds (as the kernel library's clamps).
  Value max(Value a, Value c) { return select(lt(a, c), c, a); }
  Value min(Value a, Value c) { return select(lt(c, a), c, a); }

  /// tanh as the kernel library's (runtime/kernels/Tanh.h).
  Value tanh(Value in) { return codegen::buildTanhF32(b, loc, in); }

  /// exp(x): x = n ln2 + r (Cody-Waite), a degree-5 polynomial in r
  /// (Cephes' expf), times 2^n built in the exponent bits. Inputs are
  /// clamped to [-87.3, 88.7], so the result stays normal or is +inf.
  Value exp(Value in) {
    int64_t w = width(in);
    Value x = min(cst(88.7, w), max(cst(-87.3, w), in));
    Value n = b.create<math::FloorOp>(
        loc, fma(x, cst(1.44269504088896341, w), cst(0.5, w)));
    x = fma(n, cst(-0.693359375, w), x);
    x = fma(n, cst(2.12194440e-4, w), x);
    Value p = cst(1.9875691500e-4, w);
    for (double c : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
                     1.6666665459e-1, 5.0000001201e-1})
      p = fma(p, x, cst(c, w));
    Value y = fadd(fma(p, fmul(x, x), x), cst(1.0, w));
    auto i32 = VectorType::get({w}, b.getI32Type());
    Value e = b.create<arith::FPToSIOp>(loc, i32, n);
    e = b.create<arith::AddIOp>(
        loc, e,
        b.create<arith::ConstantOp>(
            loc, DenseElementsAttr::get(i32, b.getI32IntegerAttr(127))));
    e = b.create<arith::ShLIOp>(
        loc, e,
        b.create<arith::ConstantOp>(
            loc, DenseElementsAttr::get(i32, b.getI32IntegerAttr(23))));
    return fmul(y, b.create<arith::BitcastOp>(loc, vec(w), e));
  }

  Value activate(Act a, Value x) {
    switch (a) {
    case Act::Tanh:
      return tanh(x);
    case Act::Sigmoid: {
      Value one = cst(1.0, x);
      return fdiv(one, fadd(one, exp(b.create<arith::NegFOp>(loc, x))));
    }
    case Act::Relu:
      return select(gt(x, cst(0.0, x)), x, cst(0.0, x));
    case Act::Linear:
      return x;
    case Act::HardSigmoid:
      return min(cst(1.0, x),
                 max(cst(0.0, x), fadd(fdiv(x, cst(6.0, x)), cst(0.5, x))));
    }
    return x;
  }

  /// d activation / d input from the activation's output y.
  Value activationGrad(Act a, Value y) {
    switch (a) {
    case Act::Tanh:
      return fsub(cst(1.0, y), fmul(y, y));
    case Act::Sigmoid:
      return fmul(y, fsub(cst(1.0, y), y));
    case Act::Relu:
      return select(gt(y, cst(0.0, y)), cst(1.0, y), cst(0.0, y));
    case Act::Linear:
      return cst(1.0, y);
    case Act::HardSigmoid: {
      Value inside = b.create<arith::AndIOp>(loc, gt(y, cst(0.0, y)),
                                             lt(y, cst(1.0, y)));
      return select(inside, cst(1.0 / 6.0, y), cst(0.0, y));
    }
    }
    return cst(1.0, y);
  }

  /// Calls body(start, count) on blocks of `block` items covering
  /// [0, total): an scf.for over the full blocks (inline when there is
  /// one), then the remainder once with its own static count.
  void forBlocks(int64_t total, int64_t block,
                 function_ref<void(Value, int64_t)> body) {
    int64_t full = total / block, rest = total % block;
    if (full == 1) {
      body(idx(0), block);
    } else if (full > 1) {
      auto loop = b.create<scf::ForOp>(loc, idx(0), idx(full * block),
                                       idx(block));
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      body(loop.getInductionVar(), block);
    }
    if (rest)
      body(idx(full * block), rest);
  }

  /// scf.for over [lb, ub) carrying `init`; body returns the next values.
  SmallVector<Value>
  forAcc(int64_t lb, int64_t ub, ValueRange init,
         function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto loop = b.create<scf::ForOp>(
        loc, idx(lb), idx(ub), idx(1), init,
        [&](OpBuilder &, Location l, Value iv, ValueRange acc) {
          SmallVector<Value> next = body(iv, acc);
          b.create<scf::YieldOp>(l, next);
        });
    return SmallVector<Value>(loop.getResults());
  }

  /// A serial loop over [lb, ub) whose body gets the index.
  void forEach(Value lb, Value ub, function_ref<void(Value)> body) {
    auto loop = b.create<scf::ForOp>(loc, lb, ub, idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }
};

/// The sizes of one recurrence and its attributes.
struct Dims {
  int64_t T, B, H, G, N, S, KH;
  kernels::RecurrenceParams p;
};

/// Where a step reads h_prev and c_prev: `mem` at `base + b * ld` (+ H for
/// c), the initial state at step 0, the previous states row after.
struct Prev {
  Value mem, base, ld;
};

/// A memref flattened to one dimension (a view).
Value flat(OpBuilder &b, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getRank() == 1)
    return memref;
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  return b.create<memref::CollapseShapeOp>(loc, memref,
                                           ArrayRef<ReassociationIndices>{all});
}

/// The flat read-only memref of a tensor operand.
Value flatInput(OpBuilder &b, Location loc, Value tensor) {
  auto t = cast<RankedTensorType>(tensor.getType());
  Value m = b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(t.getShape(), t.getElementType()), tensor,
      /*read_only=*/true);
  return flat(b, loc, m);
}

//===----------------------------------------------------------------------===//
// The pieces the cells share
//===----------------------------------------------------------------------===//

/// A part of the states' gradient [T, B, S] that may be nonzero: steps
/// [t0, t1) and columns [s0, s1) (whole slots of the states row), read from
/// `mem`, a flat [t1 - t0, B, s1 - s0].
struct GradBox {
  Value value; ///< the tensor (before lowering)
  Value mem;
  int64_t t0, t1, s0, s1;
};

/// The gradient of the states as the backward reads it. Usually most of it
/// is zero: the gradient of a slice of the states (the last step's h, the
/// h of every step) is that slice put back between zeros by kc.concat, and
/// kc.add sums such parts. The compiler sees those zeros, so the backward
/// reads only the nonzero boxes and the [T, B, S] buffer is never written;
/// the interpreter, one op at a time, has to build it.
struct GradStates {
  SmallVector<GradBox> boxes;

  /// Columns [slot * H + c0, + w) of row b of step s: the sum of the boxes
  /// covering the slot at that step, -0 (x + -0 == x) where none does.
  Value load(Gen &g, const Dims &d, Value s, Value b, int64_t slot, Value c0,
             int64_t w) const {
    Value sum;
    for (const GradBox &x : boxes) {
      if (x.s0 > slot * d.H || x.s1 < (slot + 1) * d.H)
        continue;
      bool always = x.t0 == 0 && x.t1 == d.T;
      Value t = s;
      if (!always)
        t = g.b.create<arith::MinSIOp>(
            g.loc, g.b.create<arith::MaxSIOp>(g.loc, s, g.idx(x.t0)),
            g.idx(x.t1 - 1));
      Value at = g.add(g.mul(g.add(g.mul(g.sub(t, g.idx(x.t0)), d.B), b),
                             x.s1 - x.s0),
                       g.add(c0, slot * d.H - x.s0));
      Value v = g.load(x.mem, at, w);
      if (!always) {
        Value inside = g.b.create<arith::AndIOp>(
            g.loc,
            g.b.create<arith::CmpIOp>(g.loc, arith::CmpIPredicate::sge, s,
                                      g.idx(x.t0)),
            g.b.create<arith::CmpIOp>(g.loc, arith::CmpIPredicate::slt, s,
                                      g.idx(x.t1)));
        v = g.select(inside, v, g.cst(-0.0, w));
      }
      sum = sum ? g.fadd(sum, v) : v;
    }
    return sum ? sum : g.cst(-0.0, w);
  }
};

/// Adds to `boxes` the parts of `v` (the region of the states' gradient
/// from step t0 and column s0) that may be nonzero: through kc.concat along
/// steps or columns and kc.add, to zero constants (nothing) and other values
/// (one box each). False when the parts are too many or not whole slots.
bool decompose(Value v, int64_t t0, int64_t s0, int64_t units,
               SmallVector<GradBox> &boxes, int depth = 0) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 3 || depth > 8 || boxes.size() > 8)
    return false;
  Operation *def = v.getDefiningOp();
  if (auto c = dyn_cast_or_null<kc::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(c.getValue());
    if (dense && dense.isSplat() && isa<FloatType>(dense.getElementType()) &&
        dense.getSplatValue<APFloat>().isZero())
      return true;
  }
  if (auto cat = dyn_cast_or_null<kc::ConcatOp>(def)) {
    int64_t axis = cat.getAxis();
    if (axis == 0 || axis == 2) {
      int64_t off = 0;
      for (Value in : cat.getInputs()) {
        if (!decompose(in, t0 + (axis == 0 ? off : 0),
                       s0 + (axis == 2 ? off : 0), units, boxes, depth + 1))
          return false;
        off += cast<RankedTensorType>(in.getType()).getDimSize(axis);
      }
      return true;
    }
  }
  if (auto add = dyn_cast_or_null<kc::AddOp>(def))
    if (add.getLhs().getType() == type && add.getRhs().getType() == type)
      return decompose(add.getLhs(), t0, s0, units, boxes, depth + 1) &&
             decompose(add.getRhs(), t0, s0, units, boxes, depth + 1);
  int64_t s1 = s0 + type.getDimSize(2);
  if (s0 % units || s1 % units)
    return false;
  boxes.push_back({v, Value(), t0, t0 + type.getDimSize(0), s0, s1});
  return true;
}

/// The flat memrefs of one recurrence.
struct Bufs {
  Value x, u, init, rb; ///< forward inputs (x is null in the backward)
  Value states;
  GradStates gs; ///< backward: the states' gradient
  Value grad;    ///< backward: the flat gradient
  Value ut;      ///< backward: U^T [N, H]
  Value scratch; ///< backward, GRU: per-step rows (see the cells)
  Value reverse; ///< i1: step s reads x row T-1-s (an argument, so the two
                 ///< directions of a Bidirectional layer share the code)
};

/// Where one step works: its states row, the x (d x) row it reads (writes),
/// where h_prev is, and (backward) the gradient buffer's parts.
struct StepAt {
  Value s;    ///< the step
  Value out;  ///< states row s: s * B * S
  Value xRow; ///< x / d x row: row * B * N
  Prev prev;
  Value dU, dInit, dRb;
};

/// acc[r * gates + k] += sum over j < K of lhs[lhsRow[r] + j] times
/// U[j, col0 + k * H + c0 .. + w], for the rows r of a block: each row of U
/// loaded once for all the block's rows, the sums in registers.
SmallVector<Value> productBlock(Gen &g, const Dims &d, Value u, int64_t col0,
                                Value c0, int64_t w, int64_t gates, int64_t K,
                                Value lhs, ArrayRef<Value> lhsRow,
                                SmallVector<Value> acc) {
  const int64_t rows = lhsRow.size(), H = d.H, N = d.N;
  return g.forAcc(0, K, acc, [&](Value j, ValueRange a) {
    SmallVector<Value> uj, next;
    Value at = g.add(g.add(g.mul(j, N), c0), col0);
    for (int64_t k = 0; k < gates; ++k)
      uj.push_back(g.load(u, g.add(at, k * H), w));
    for (int64_t r = 0; r < rows; ++r) {
      Value h = g.splat(g.scalar(lhs, g.add(lhsRow[r], j)), w);
      for (int64_t k = 0; k < gates; ++k)
        next.push_back(g.fma(h, uj[k], a[r * gates + k]));
    }
    return next;
  });
}

/// The carry's product for the rows of a block: dst[dstRow[r] + c] (+)=
/// sum over k < gates, j < H of src[srcRow[r] + k * H + j] times
/// U^T[utRow0 + k * H + j, c], one partial sum per gate in registers.
void carryProduct(Gen &g, const Dims &d, Value ut, int64_t utRow0,
                  int64_t gates, Value src, ArrayRef<Value> srcRow, Value dst,
                  ArrayRef<Value> dstRow, bool accumulate) {
  const int64_t rows = srcRow.size(), H = d.H;
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc(rows * gates, g.cst(0.0, w));
    acc = g.forAcc(0, H, acc, [&](Value j, ValueRange a) {
      SmallVector<Value> uj, next;
      for (int64_t k = 0; k < gates; ++k)
        uj.push_back(g.load(
            ut, g.add(g.mul(g.add(j, utRow0 + k * H), H), c0), w));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < gates; ++k) {
          Value z = g.scalar(src, g.add(g.add(srcRow[r], k * H), j));
          next.push_back(g.fma(g.splat(z, w), uj[k], a[r * gates + k]));
        }
      return next;
    });
    for (int64_t r = 0; r < rows; ++r) {
      SmallVector<Value> sums(acc.begin() + r * gates,
                              acc.begin() + (r + 1) * gates);
      while (sums.size() > 1) {
        SmallVector<Value> pairs;
        for (size_t i = 0; i + 1 < sums.size(); i += 2)
          pairs.push_back(g.fadd(sums[i], sums[i + 1]));
        if (sums.size() % 2)
          pairs.push_back(sums.back());
        sums = pairs;
      }
      Value at = g.add(dstRow[r], c0);
      g.store(accumulate ? g.fadd(g.load(dst, at, w), sums[0]) : sums[0], dst,
              at, w);
    }
  });
}

/// d U[k, col + j] += sum over b of lhs[lhsBase + b * lhsLd + k] times
/// src[srcBase + b * srcLd + j], for k < H, j < cols: kGradRows rows of
/// d U (16 lanes each) in registers over the batch.
void accumulateOuter(Gen &g, const Dims &d, Value lhs, Value lhsBase,
                     Value lhsLd, Value src, Value srcBase, int64_t srcLd,
                     int64_t cols, Value grad, Value dUCol) {
  const int64_t N = d.N, B = d.B;
  g.forBlocks(d.H, kGradRows, [&](Value k0, int64_t kc) {
    g.forBlocks(cols, kLanes, [&](Value j0, int64_t w) {
      auto dUAt = [&](int64_t k) {
        return g.add(g.add(dUCol, g.mul(g.add(k0, k), N)), j0);
      };
      SmallVector<Value> acc;
      for (int64_t k = 0; k < kc; ++k)
        acc.push_back(g.load(grad, dUAt(k), w));
      acc = g.forAcc(0, B, acc, [&](Value bi, ValueRange a) {
        Value z = g.load(src, g.add(g.add(srcBase, g.mul(bi, srcLd)), j0), w);
        Value hp = g.add(g.add(lhsBase, g.mul(bi, lhsLd)), k0);
        SmallVector<Value> next;
        for (int64_t k = 0; k < kc; ++k)
          next.push_back(
              g.fma(g.splat(g.scalar(lhs, g.add(hp, k)), w), z, a[k]));
        return next;
      });
      for (int64_t k = 0; k < kc; ++k)
        g.store(acc[k], grad, dUAt(k), w);
    });
  });
}

/// d rbias[j] += sum over b of src[srcBase + b * srcLd + j], j < N.
void accumulateColumnSums(Gen &g, const Dims &d, Value src, Value srcBase,
                          int64_t srcLd, Value grad, Value dRb) {
  g.forBlocks(d.N, kLanes, [&](Value j0, int64_t w) {
    Value at = g.add(dRb, j0);
    SmallVector<Value> acc{g.load(grad, at, w)};
    acc = g.forAcc(0, d.B, acc, [&](Value bi, ValueRange a) {
      Value z = g.load(src, g.add(g.add(srcBase, g.mul(bi, srcLd)), j0), w);
      return SmallVector<Value>{g.fadd(a[0], z)};
    });
    g.store(acc[0], grad, at, w);
  });
}

/// Offsets of the rows [b0, b0 + rows): base + b * ld.
SmallVector<Value> rowsAt(Gen &g, Value base, Value ld, Value b0,
                          int64_t rows) {
  SmallVector<Value> at;
  for (int64_t r = 0; r < rows; ++r)
    at.push_back(g.add(base, g.mul(g.add(b0, r), ld)));
  return at;
}
SmallVector<Value> rowsAt(Gen &g, Value base, int64_t ld, Value b0,
                          int64_t rows) {
  return rowsAt(g, base, g.idx(ld), b0, rows);
}

//===----------------------------------------------------------------------===//
// The cells: one step for the batch rows [b0, b0 + rows)
//===----------------------------------------------------------------------===//

/// LSTM forward. States row: h, c, i, f, g, o.
void lstmForward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                 Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  SmallVector<Value> xb = rowsAt(g, at.xRow, N, b0, rows),
                     pb = rowsAt(g, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(g, at.out, S, b0, rows);
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    // z = x + rbias, then z += h_prev . U, gate by gate in registers.
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k)
        acc.push_back(g.fadd(g.load(m.x, g.add(g.add(xb[r], k * H), c0), w),
                             g.load(m.rb, g.add(c0, k * H), w)));
    acc = productBlock(g, d, m.u, 0, c0, w, 4, H, at.prev.mem, pb, acc);
    // The gate arithmetic, one row at a time (one copy of the activations'
    // code): the pre-activations go through the row's gate slots.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k)
        g.store(acc[r * 4 + k], m.states,
                g.add(g.add(ob[r], (2 + k) * H), c0), w);
    g.forEach(b0, g.add(b0, rows), [&](Value bi) {
      Value row = g.add(g.add(at.out, g.mul(bi, S)), c0);
      auto z = [&](int64_t k) {
        return g.load(m.states, g.add(row, (2 + k) * H), w);
      };
      Value i = g.activate(ra, z(0)), f = g.activate(ra, z(1)),
            c = g.activate(a, z(2)), o = g.activate(ra, z(3));
      Value cp = g.load(
          at.prev.mem,
          g.add(g.add(g.add(at.prev.base, g.mul(bi, at.prev.ld)), H), c0), w);
      Value cell = g.fadd(g.fmul(f, cp), g.fmul(i, c));
      Value h = g.fmul(g.activate(a, cell), o);
      int64_t slot = 0;
      for (Value v : {h, cell, i, f, c, o})
        g.store(v, m.states, g.add(row, H * slot++), w);
    });
  });
}

/// LSTM backward: the gate gradients (the d x row) and the carry d c, one
/// row at a time; then the carry d h = d z . U^T for the block.
void lstmBackward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                  Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  g.forEach(b0, g.add(b0, rows), [&](Value bi) {
    Value srow = g.add(at.out, g.mul(bi, S)),
          zrow = g.add(at.xRow, g.mul(bi, N)),
          crow = g.add(at.dInit, g.mul(bi, 2 * H)),
          prow = g.add(at.prev.base, g.mul(bi, at.prev.ld));
    g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value sat = g.add(srow, c0);
      auto st = [&](int64_t slot) {
        return g.load(m.states, g.add(sat, slot * H), w);
      };
      auto gs = [&](int64_t slot) {
        return m.gs.load(g, d, at.s, bi, slot, c0, w);
      };
      Value cell = st(1), i = st(2), f = st(3), c = st(4), o = st(5);
      Value ac = g.activate(a, cell);
      Value carry = g.add(crow, c0);
      Value dh = g.load(m.grad, carry, w),
            dc = g.load(m.grad, g.add(carry, H), w);
      Value cp = g.load(at.prev.mem, g.add(g.add(prow, H), c0), w);
      Value dht = g.fadd(gs(0), dh);
      Value dct = g.fadd(g.fadd(gs(1), dc),
                         g.fmul(g.fmul(dht, o), g.activationGrad(a, ac)));
      Value dz[4] = {
          g.fmul(g.fadd(g.fmul(dct, c), gs(2)), g.activationGrad(ra, i)),
          g.fmul(g.fadd(g.fmul(dct, cp), gs(3)), g.activationGrad(ra, f)),
          g.fmul(g.fadd(g.fmul(dct, i), gs(4)), g.activationGrad(a, c)),
          g.fmul(g.fadd(g.fmul(dht, ac), gs(5)), g.activationGrad(ra, o))};
      Value zat = g.add(zrow, c0);
      for (int64_t k = 0; k < 4; ++k)
        g.store(dz[k], m.grad, g.add(zat, k * H), w);
      g.store(g.fmul(dct, f), m.grad, g.add(carry, H), w);
    });
  });
  carryProduct(g, d, m.ut, 0, 4, m.grad, rowsAt(g, at.xRow, N, b0, rows),
               m.grad, rowsAt(g, at.dInit, 2 * H, b0, rows),
               /*accumulate=*/false);
}

/// SimpleRNN forward. States row: h.
void simpleForward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                   Value b0, int64_t rows) {
  const int64_t H = d.H;
  SmallVector<Value> xb = rowsAt(g, at.xRow, H, b0, rows),
                     pb = rowsAt(g, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(g, at.out, H, b0, rows);
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      acc.push_back(g.fadd(g.load(m.x, g.add(xb[r], c0), w),
                           g.load(m.rb, c0, w)));
    acc = productBlock(g, d, m.u, 0, c0, w, 1, H, at.prev.mem, pb, acc);
    for (int64_t r = 0; r < rows; ++r)
      g.store(g.activate(d.p.activation, acc[r]), m.states,
              g.add(ob[r], c0), w);
  });
}

/// SimpleRNN backward: d z = (d h_t) a'(h), then d h = d z . U^T.
void simpleBackward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                    Value b0, int64_t rows) {
  const int64_t H = d.H;
  g.forEach(b0, g.add(b0, rows), [&](Value bi) {
    Value srow = g.add(at.out, g.mul(bi, H)),
          zrow = g.add(at.xRow, g.mul(bi, H)),
          crow = g.add(at.dInit, g.mul(bi, H));
    g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value h = g.load(m.states, g.add(srow, c0), w);
      Value dht = g.fadd(m.gs.load(g, d, at.s, bi, 0, c0, w),
                         g.load(m.grad, g.add(crow, c0), w));
      g.store(g.fmul(dht, g.activationGrad(d.p.activation, h)), m.grad,
              g.add(zrow, c0), w);
    });
  });
  carryProduct(g, d, m.ut, 0, 1, m.grad, rowsAt(g, at.xRow, H, b0, rows),
               m.grad, rowsAt(g, at.dInit, H, b0, rows),
               /*accumulate=*/false);
}

/// GRU forward, reset_after: h.U + b for the three gates in registers, then
/// per row z, r, the candidate from r * (h.U + b)_h, and h. States row: h,
/// z, r, hh, (h.U + b)_h; the products pass through the z, r and last slots.
void gruAfterForward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                     Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  SmallVector<Value> pb = rowsAt(g, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(g, at.out, S, b0, rows);
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 3; ++k)
        acc.push_back(g.load(m.rb, g.add(c0, k * H), w));
    acc = productBlock(g, d, m.u, 0, c0, w, 3, H, at.prev.mem, pb, acc);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 3; ++k)
        g.store(acc[r * 3 + k], m.states,
                g.add(g.add(ob[r], (k == 2 ? 4 : 1 + k) * H), c0), w);
    g.forEach(b0, g.add(b0, rows), [&](Value bi) {
      Value row = g.add(g.add(at.out, g.mul(bi, S)), c0);
      Value xa = g.add(g.add(at.xRow, g.mul(bi, N)), c0);
      auto x = [&](int64_t k) { return g.load(m.x, g.add(xa, k * H), w); };
      auto rec = [&](int64_t slot) {
        return g.load(m.states, g.add(row, slot * H), w);
      };
      Value hp = g.load(
          at.prev.mem,
          g.add(g.add(at.prev.base, g.mul(bi, at.prev.ld)), c0), w);
      Value recH = rec(4);
      Value z = g.activate(ra, g.fadd(x(0), rec(1)));
      Value r = g.activate(ra, g.fadd(x(1), rec(2)));
      Value hh = g.activate(a, g.fadd(x(2), g.fmul(r, recH)));
      Value h = g.fadd(g.fmul(z, hp), g.fmul(g.fsub(g.cst(1.0, z), z), hh));
      int64_t slot = 0;
      for (Value v : {h, z, r, hh})
        g.store(v, m.states, g.add(row, H * slot++), w);
    });
  });
}

/// GRU backward, reset_after: per row the gate gradients (the d x row) and
/// those of h.U + b (the scratch row, [B, 3H]), the carry d h = d h_t z;
/// then d h += d(h.U + b) . U^T for the block.
void gruAfterBackward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                      Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  g.forEach(b0, g.add(b0, rows), [&](Value bi) {
    Value srow = g.add(at.out, g.mul(bi, S)),
          zrow = g.add(at.xRow, g.mul(bi, N)), rrow = g.mul(bi, N),
          crow = g.add(at.dInit, g.mul(bi, H)),
          prow = g.add(at.prev.base, g.mul(bi, at.prev.ld));
    g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value sat = g.add(srow, c0);
      auto st = [&](int64_t slot) {
        return g.load(m.states, g.add(sat, slot * H), w);
      };
      auto gs = [&](int64_t slot) {
        return m.gs.load(g, d, at.s, bi, slot, c0, w);
      };
      Value z = st(1), r = st(2), hh = st(3), recH = st(4);
      Value hp = g.load(at.prev.mem, g.add(prow, c0), w);
      Value carry = g.add(crow, c0);
      Value dht = g.fadd(gs(0), g.load(m.grad, carry, w));
      Value dzh = g.fmul(g.fadd(g.fmul(dht, g.fsub(g.cst(1.0, z), z)), gs(3)),
                         g.activationGrad(a, hh));
      Value dzz = g.fmul(g.fadd(g.fmul(dht, g.fsub(hp, hh)), gs(1)),
                         g.activationGrad(ra, z));
      Value dzr = g.fmul(g.fadd(g.fmul(dzh, recH), gs(2)),
                         g.activationGrad(ra, r));
      Value zat = g.add(zrow, c0), rat = g.add(rrow, c0);
      int64_t k = 0;
      for (Value v : {dzz, dzr, dzh})
        g.store(v, m.grad, g.add(zat, H * k++), w);
      k = 0;
      for (Value v : {dzz, dzr, g.fadd(g.fmul(dzh, r), gs(4))})
        g.store(v, m.scratch, g.add(rat, H * k++), w);
      g.store(g.fmul(dht, z), m.grad, carry, w);
    });
  });
  carryProduct(g, d, m.ut, 0, 3, m.scratch, rowsAt(g, g.idx(0), N, b0, rows),
               m.grad, rowsAt(g, at.dInit, H, b0, rows), /*accumulate=*/true);
}

/// GRU forward, reset_after = false: z and r from h.U + b, then the
/// candidate from (r * h).U_h + b_h. States row: h, z, r, hh; the products
/// pass through the z, r and h slots, r * h through the hh slot.
void gruBeforeForward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                      Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  SmallVector<Value> pb = rowsAt(g, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(g, at.out, S, b0, rows);
  auto perRow = [&](function_ref<void(Value, Value, Value, Value, int64_t)>
                        body) {
    g.forEach(b0, g.add(b0, rows), [&](Value bi) {
      Value row = g.add(at.out, g.mul(bi, S));
      Value xa = g.add(at.xRow, g.mul(bi, N));
      Value hpa = g.add(at.prev.base, g.mul(bi, at.prev.ld));
      g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
        body(g.add(row, c0), g.add(xa, c0), g.add(hpa, c0), c0, w);
      });
    });
  };
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 2; ++k)
        acc.push_back(g.load(m.rb, g.add(c0, k * H), w));
    acc = productBlock(g, d, m.u, 0, c0, w, 2, H, at.prev.mem, pb, acc);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 2; ++k)
        g.store(acc[r * 2 + k], m.states,
                g.add(g.add(ob[r], (1 + k) * H), c0), w);
  });
  perRow([&](Value row, Value xa, Value hpa, Value, int64_t w) {
    Value z = g.activate(ra, g.fadd(g.load(m.x, xa, w),
                                    g.load(m.states, g.add(row, H), w)));
    Value r = g.activate(ra, g.fadd(g.load(m.x, g.add(xa, H), w),
                                    g.load(m.states, g.add(row, 2 * H), w)));
    g.store(z, m.states, g.add(row, H), w);
    g.store(r, m.states, g.add(row, 2 * H), w);
    g.store(g.fmul(r, g.load(at.prev.mem, hpa, w)), m.states,
            g.add(row, 3 * H), w);
  });
  SmallVector<Value> rh;
  for (Value o : ob)
    rh.push_back(g.add(o, 3 * H));
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc(rows, g.load(m.rb, g.add(c0, 2 * H), w));
    acc = productBlock(g, d, m.u, 2 * H, c0, w, 1, H, m.states, rh, acc);
    for (int64_t r = 0; r < rows; ++r)
      g.store(acc[r], m.states, g.add(ob[r], c0), w);
  });
  perRow([&](Value row, Value xa, Value hpa, Value, int64_t w) {
    Value z = g.load(m.states, g.add(row, H), w);
    Value hh = g.activate(a, g.fadd(g.load(m.x, g.add(xa, 2 * H), w),
                                    g.load(m.states, row, w)));
    Value h = g.fadd(g.fmul(z, g.load(at.prev.mem, hpa, w)),
                     g.fmul(g.fsub(g.cst(1.0, z), z), hh));
    g.store(h, m.states, row, w);
    g.store(hh, m.states, g.add(row, 3 * H), w);
  });
}

/// GRU backward, reset_after = false: d z_h, d z_z, the carry d h_t z and
/// r * h (scratch [B, H]) per row; d(r * h) = d z_h . U_h^T (scratch [B, H]
/// after the first); d z_r and d h += d(r * h) r per row; then d h +=
/// d z_{z,r} . U_{z,r}^T.
void gruBeforeBackward(Gen &g, const Dims &d, const Bufs &m, const StepAt &at,
                       Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S, B = d.B;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  // body(b, c0, then the offsets of row b, columns c0 of: the states row,
  // the d x row, the carry, h_prev, the scratch row; w).
  auto perRow = [&](function_ref<void(Value, Value, Value, Value, Value,
                                      Value, Value, int64_t)>
                        body) {
    g.forEach(b0, g.add(b0, rows), [&](Value bi) {
      Value sat = g.add(at.out, g.mul(bi, S));
      Value zat = g.add(at.xRow, g.mul(bi, N));
      Value cat = g.add(at.dInit, g.mul(bi, H));
      Value hpa = g.add(at.prev.base, g.mul(bi, at.prev.ld));
      Value rat = g.mul(bi, H);
      g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
        body(bi, c0, g.add(sat, c0), g.add(zat, c0), g.add(cat, c0),
             g.add(hpa, c0), g.add(rat, c0), w);
      });
    });
  };
  perRow([&](Value bi, Value c0, Value sat, Value zat, Value cat, Value hpa,
             Value rat, int64_t w) {
    auto st = [&](int64_t slot) {
      return g.load(m.states, g.add(sat, slot * H), w);
    };
    auto gs = [&](int64_t slot) {
      return m.gs.load(g, d, at.s, bi, slot, c0, w);
    };
    Value z = st(1), r = st(2), hh = st(3);
    Value hp = g.load(at.prev.mem, hpa, w);
    Value dht = g.fadd(gs(0), g.load(m.grad, cat, w));
    g.store(g.fmul(g.fadd(g.fmul(dht, g.fsub(g.cst(1.0, z), z)), gs(3)),
                   g.activationGrad(a, hh)),
            m.grad, g.add(zat, 2 * H), w);
    g.store(g.fmul(g.fadd(g.fmul(dht, g.fsub(hp, hh)), gs(1)),
                   g.activationGrad(ra, z)),
            m.grad, zat, w);
    g.store(g.fmul(dht, z), m.grad, cat, w);
    g.store(g.fmul(r, hp), m.scratch, rat, w);
  });
  SmallVector<Value> zrows = rowsAt(g, at.xRow, N, b0, rows);
  SmallVector<Value> zh;
  for (Value z : zrows)
    zh.push_back(g.add(z, 2 * H));
  carryProduct(g, d, m.ut, 2 * H, 1, m.grad, zh, m.scratch,
               rowsAt(g, g.idx(B * H), H, b0, rows), /*accumulate=*/false);
  perRow([&](Value bi, Value c0, Value sat, Value zat, Value cat, Value hpa,
             Value rat, int64_t w) {
    Value r = g.load(m.states, g.add(sat, 2 * H), w);
    Value drh = g.load(m.scratch, g.add(rat, B * H), w);
    Value hp = g.load(at.prev.mem, hpa, w);
    g.store(g.fmul(g.fadd(g.fmul(drh, hp), m.gs.load(g, d, at.s, bi, 2, c0, w)),
                   g.activationGrad(ra, r)),
            m.grad, g.add(zat, H), w);
    g.store(g.fadd(g.load(m.grad, cat, w), g.fmul(drh, r)), m.grad, cat, w);
  });
  carryProduct(g, d, m.ut, 0, 2, m.grad, zrows, m.grad,
               rowsAt(g, at.dInit, H, b0, rows), /*accumulate=*/true);
}

/// Whether a recurrence gets generated steps: f32, with a recurrent kernel
/// that stays in cache.
bool generated(const Dims &d, Type elt) {
  return elt.isF32() && d.H * d.N * 4 <= kMaxKernelBytes && d.T > 0 &&
         d.B > 0 && d.H > 0;
}

template <typename OpTy>
FailureOr<Dims> dimsOf(OpTy op, RankedTensorType states,
                       RankedTensorType kernel) {
  FailureOr<kernels::RecurrenceParams> p = kc::recurrenceParams(op);
  if (failed(p))
    return failure();
  Dims d;
  d.p = *p;
  d.T = states.getDimSize(0);
  d.B = states.getDimSize(1);
  d.H = kernel.getDimSize(0);
  d.G = kernels::recurrentGates(p->cell);
  d.N = d.G * d.H;
  d.S = kernels::recurrentStateWidth(*p, d.H);
  d.KH = kernels::recurrentInitialWidth(p->cell, d.H);
  return d;
}

/// Elements of the backward's scratch (0: none).
int64_t scratchSize(const Dims &d) {
  if (d.p.cell != kernels::RecurrentCell::Gru)
    return 0;
  return d.p.resetAfter ? d.B * d.N : 2 * d.B * d.H;
}

/// Where step `s` reads h_prev and c_prev: the initial state at step 0,
/// the previous states row after (one select, so one copy of the step).
Prev prevOf(Gen &g, const Dims &d, Value s, Value init, Value states) {
  auto dyn = MemRefType::get({ShapedType::kDynamic}, g.f32);
  Value first = g.b.create<arith::CmpIOp>(g.loc, arith::CmpIPredicate::eq, s,
                                          g.idx(0));
  Value fromInit = g.b.create<memref::CastOp>(g.loc, dyn, init);
  Value fromStates = g.b.create<memref::CastOp>(g.loc, dyn, states);
  Value before = g.mul(g.sub(g.b.create<arith::MaxSIOp>(g.loc, s, g.idx(1)),
                             g.idx(1)),
                       d.B * d.S);
  return {g.select(first, fromInit, fromStates),
          g.select(first, g.idx(0), before),
          g.select(first, g.idx(d.KH), g.idx(d.S))};
}

/// The forward over time.
void emitForward(Gen &g, const Dims &d, const Bufs &m) {
  using Cell = kernels::RecurrentCell;
  g.forEach(g.idx(0), g.idx(d.T), [&](Value s) {
    StepAt at;
    Value row = g.select(m.reverse, g.sub(g.idx(d.T - 1), s), s);
    at.prev = prevOf(g, d, s, m.init, m.states);
    at.xRow = g.mul(row, d.B * d.N);
    at.out = g.mul(s, d.B * d.S);
    g.forBlocks(d.B, kRows, [&](Value b0, int64_t rows) {
      switch (d.p.cell) {
      case Cell::Lstm:
        return lstmForward(g, d, m, at, b0, rows);
      case Cell::Gru:
        return d.p.resetAfter ? gruAfterForward(g, d, m, at, b0, rows)
                              : gruBeforeForward(g, d, m, at, b0, rows);
      case Cell::SimpleRnn:
        return simpleForward(g, d, m, at, b0, rows);
      }
    });
  });
}

/// The backward over time, from the last step down: per block of rows the
/// cell's gate gradients and carries, then per step d U and d rbias.
void emitBackward(Gen &g, const Dims &d, const Bufs &m) {
  using Cell = kernels::RecurrentCell;
  const int64_t T = d.T, B = d.B, H = d.H, N = d.N, S = d.S;
  // U^T [N, H], once.
  g.forEach(g.idx(0), g.idx(H), [&](Value k) {
    g.forEach(g.idx(0), g.idx(N), [&](Value j) {
      g.b.create<memref::StoreOp>(g.loc,
                                  g.scalar(m.u, g.add(g.mul(k, N), j)), m.ut,
                                  ValueRange{g.add(g.mul(j, H), k)});
    });
  });
  // The accumulators and carries start at zero: d U, d initial, d rbias.
  Value dU = g.idx(T * B * N), dInit = g.idx(T * B * N + H * N),
        dRb = g.idx(T * B * N + H * N + B * d.KH);
  g.forBlocks(H * N + B * d.KH + N, kLanes, [&](Value i, int64_t w) {
    g.store(g.cst(0.0, w), m.grad, g.add(dU, i), w);
  });
  g.forEach(g.idx(0), g.idx(T), [&](Value i) {
    StepAt at;
    Value s = g.sub(g.idx(T - 1), i);
    Value row = g.select(m.reverse, i, s);
    at.s = s;
    at.prev = prevOf(g, d, s, m.init, m.states);
    at.out = g.mul(s, B * S);
    at.xRow = g.mul(row, B * N);
    at.dU = dU, at.dInit = dInit, at.dRb = dRb;
    g.forBlocks(B, kRows, [&](Value b0, int64_t rows) {
      switch (d.p.cell) {
      case Cell::Lstm:
        return lstmBackward(g, d, m, at, b0, rows);
      case Cell::Gru:
        return d.p.resetAfter ? gruAfterBackward(g, d, m, at, b0, rows)
                              : gruBeforeBackward(g, d, m, at, b0, rows);
      case Cell::SimpleRnn:
        return simpleBackward(g, d, m, at, b0, rows);
      }
    });
    // What multiplies U: the gate gradients, except for GRU's reset_after
    // (the gradient of h.U + b, in the scratch rows) and the candidate of
    // reset_after = false (multiplying r * h, also in the scratch).
    bool after = d.p.cell == Cell::Gru && d.p.resetAfter;
    bool before = d.p.cell == Cell::Gru && !d.p.resetAfter;
    Value src = after ? m.scratch : m.grad;
    Value srcBase = after ? g.idx(0) : at.xRow;
    accumulateOuter(g, d, at.prev.mem, at.prev.base, at.prev.ld, src, srcBase,
                    N, before ? 2 * H : N, m.grad, dU);
    if (before)
      accumulateOuter(g, d, m.scratch, g.idx(0), g.idx(H), m.grad,
                      g.add(at.xRow, 2 * H), N, H, m.grad, g.add(dU, 2 * H));
    accumulateColumnSums(g, d, src, srcBase, N, m.grad, dRb);
  });
}

/// The function holding a generated recurrence, `name` in the module,
/// created on first use: a recurrence with the same name (the same cell,
/// sizes and, for the backward, the same nonzero parts of the states'
/// gradient) calls the same code, so the two directions of a Bidirectional
/// layer, and the forward of @forward and of @train_step, are compiled once.
/// Its arguments: flat static memrefs (bare pointers after lowering), then
/// the direction as an i1.
func::FuncOp getOrCreateRecurrence(ConversionPatternRewriter &rewriter,
                                   Operation *op, StringRef name,
                                   ArrayRef<Value> memrefs,
                                   function_ref<void(Gen &, ValueRange)> body) {
  auto module = op->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  SmallVector<Type> types(ValueRange(memrefs).getTypes());
  types.push_back(rewriter.getI1Type());
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToEnd(module.getBody());
  auto f = rewriter.create<func::FuncOp>(op->getLoc(), name,
                                         rewriter.getFunctionType(types, {}));
  f.setPrivate();
  // Internal in LLVM too: no symbol of a library or object file.
  f->setAttr("llvm.linkage", LLVM::LinkageAttr::get(rewriter.getContext(),
                                                   LLVM::Linkage::Internal));
  Block *entry = f.addEntryBlock();
  rewriter.setInsertionPointToStart(entry);
  Gen g(rewriter, op->getLoc());
  body(g, entry->getArguments());
  rewriter.create<func::ReturnOp>(op->getLoc());
  return f;
}

/// The part of a generated function's name every recurrence shares.
std::string recurrenceKey(const Dims &d, StringRef what) {
  std::string key;
  llvm::raw_string_ostream os(key);
  os << "kc_" << what << "_" << kernels::recurrentCellName(d.p.cell);
  if (d.p.cell == kernels::RecurrentCell::Gru && !d.p.resetAfter)
    os << "_v1";
  os << "_" << d.T << "x" << d.B << "x" << d.H << "_a"
     << static_cast<int>(d.p.activation) << "r"
     << static_cast<int>(d.p.recurrentActivation);
  return os.str();
}

struct RecurrenceLowering : OpConversionPattern<kc::RecurrenceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::RecurrenceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto states = cast<RankedTensorType>(op.getType());
    auto kernel = cast<RankedTensorType>(op.getKernel().getType());
    FailureOr<Dims> d = dimsOf(op, states, kernel);
    if (failed(d))
      return failure();
    if (!generated(*d, states.getElementType()))
      return emitStepLoop(op, "recurrence_step",
                          {adaptor.getX(), adaptor.getKernel(),
                           adaptor.getInitialState(),
                           adaptor.getRecurrentBias()},
                          /*backward=*/false, d->T, d->B, d->H, rewriter);
    Location loc = op.getLoc();
    Value out = rewriter.create<memref::AllocOp>(
        loc, MemRefType::get(states.getShape(), states.getElementType()),
        rewriter.getI64IntegerAttr(64));
    SmallVector<Value> args = {flatInput(rewriter, loc, adaptor.getX()),
                               flatInput(rewriter, loc, adaptor.getKernel()),
                               flatInput(rewriter, loc,
                                         adaptor.getInitialState()),
                               flatInput(rewriter, loc,
                                         adaptor.getRecurrentBias()),
                               flat(rewriter, loc, out)};
    func::FuncOp fn = getOrCreateRecurrence(
        rewriter, op, recurrenceKey(*d, "recurrence"), args,
        [&](Gen &g, ValueRange a) {
          Bufs m;
          m.x = a[0], m.u = a[1], m.init = a[2], m.rb = a[3], m.states = a[4];
          m.reverse = a[5];
          emitForward(g, *d, m);
        });
    args.push_back(rewriter.create<arith::ConstantOp>(
        loc, rewriter.getBoolAttr(d->p.reverse)));
    rewriter.create<func::CallOp>(loc, fn, args);
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, states, out, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

struct RecurrenceGradLowering : OpConversionPattern<kc::RecurrenceGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(kc::RecurrenceGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto states = cast<RankedTensorType>(op.getStates().getType());
    auto kernel = cast<RankedTensorType>(op.getKernel().getType());
    auto gradType = cast<RankedTensorType>(op.getType());
    FailureOr<Dims> d = dimsOf(op, states, kernel);
    if (failed(d))
      return failure();
    if (!generated(*d, gradType.getElementType()))
      return emitStepLoop(op, "recurrence_grad_step",
                          {adaptor.getKernel(), adaptor.getInitialState(),
                           adaptor.getStates(), adaptor.getGradStates()},
                          /*backward=*/true, d->T, d->B, d->H, rewriter);
    Location loc = op.getLoc();
    // The states' gradient: its nonzero parts, or the whole buffer.
    GradStates gs;
    if (!decompose(op.getGradStates(), 0, 0, d->H, gs.boxes))
      gs.boxes = {{op.getGradStates(), Value(), 0, d->T, 0, d->S}};
    auto alloc = [&](int64_t n) -> Value {
      return rewriter.create<memref::AllocOp>(
          loc, MemRefType::get({n}, rewriter.getF32Type()),
          rewriter.getI64IntegerAttr(64));
    };
    Value grad = alloc(gradType.getNumElements());
    SmallVector<Value> args = {
        flatInput(rewriter, loc, adaptor.getKernel()),
        flatInput(rewriter, loc, adaptor.getInitialState()),
        flatInput(rewriter, loc, adaptor.getStates()), grad,
        alloc(d->N * d->H)};
    int64_t scratch = scratchSize(*d);
    if (scratch)
      args.push_back(alloc(scratch));
    std::string name = recurrenceKey(*d, "recurrence_grad");
    llvm::raw_string_ostream os(name);
    for (const GradBox &box : gs.boxes) {
      args.push_back(
          flatInput(rewriter, loc, rewriter.getRemappedValue(box.value)));
      os << "_g" << box.t0 << "_" << box.t1 << "_" << box.s0 << "_" << box.s1;
    }
    os.flush();
    func::FuncOp fn = getOrCreateRecurrence(
        rewriter, op, name, args, [&](Gen &g, ValueRange a) {
          Bufs m;
          m.u = a[0], m.init = a[1], m.states = a[2], m.grad = a[3];
          m.ut = a[4];
          size_t next = 5;
          if (scratch)
            m.scratch = a[next++];
          m.gs = gs;
          for (GradBox &box : m.gs.boxes)
            box.mem = a[next++];
          m.reverse = a[next];
          emitBackward(g, *d, m);
        });
    args.push_back(rewriter.create<arith::ConstantOp>(
        loc, rewriter.getBoolAttr(d->p.reverse)));
    rewriter.create<func::CallOp>(loc, fn, args);
    rewriter.replaceOpWithNewOp<bufferization::ToTensorOp>(
        op, gradType, grad, /*restrict=*/true, /*writable=*/true);
    return success();
  }
};

} // namespace

void kcc::codegen::populateRecurrencePatterns(RewritePatternSet &patterns) {
  patterns.add<RecurrenceLowering, RecurrenceGradLowering>(
      patterns.getContext());
}
