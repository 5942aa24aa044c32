//===- LowerRecurrence.cpp - kc.recurrence as generated loops over time ---===//
//
// kc.recurrence and kc.recurrence_grad (layouts in runtime/kernels/
// Recurrence.h) become a loop over time in the IR, so the module's size does
// not depend on T.
//
// f32 LSTM cells (the common case) are generated here in full: the
// compiler knows B, H and the activations, so each step is one fused loop
// nest specialized to them, on the calling thread, with no call per step:
//
//   forward, per block of 4 batch rows and 16 units: the recurrent product
//     h_prev . U for the four gates accumulates in 16 vector registers
//     (starting from the input projection row), and the gate arithmetic
//     runs on those registers as the product's epilogue; the states row
//     (h, c, i, f, g, o) is written once;
//   backward, per block of rows: the gate gradients from the saved row, the
//     carries and the incoming gradient, written as that step's d x row, then
//     the carry d h = d z . U^T from registers (U^T is transposed once,
//     before the loop), then d U += h_prev^T . d z and d rbias += sum d z
//     for the step, with 4 rows of d U in registers over the batch.
//
// Step 0 reads the initial state where the others read the previous states
// row: a select of the buffer, so the step is emitted once. The activations are the kernel library's: the same rational
// tanh, sigmoid as 1 / (1 + exp(-x)) with a Cephes-style polynomial exp
// (within 2 ulp of libm's), relu, linear and hard_sigmoid, so compiled and
// interpreted steps agree to rounding.
//
// Other cells, f64 (the gradient checks), and recurrent kernels too large
// for the cache (beyond 256 KiB, where the library's oneDNN products win)
// loop over the step entry points of runtime/LibraryCalls.h instead, the
// arithmetic the interpreter runs.
//
//===----------------------------------------------------------------------===//

#include "codegen/LoweringUtils.h"
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

/// Declares `name` (private, external) in the module unless it exists.
func::FuncOp getOrDeclare(OpBuilder &b, ModuleOp module, StringRef name,
                          FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = b.create<func::FuncOp>(module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

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
      getOrDeclare(rewriter, op->template getParentOfType<ModuleOp>(), name,
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

  // Vectors.
  VectorType vec(int64_t w) { return VectorType::get({w}, f32); }
  static int64_t width(Value v) {
    return cast<VectorType>(v.getType()).getDimSize(0);
  }
  Value load(Value mem, Value off, int64_t w) {
    return b.create<vector::LoadOp>(loc, vec(w), mem, ValueRange{off});
  }
  void store(Value v, Value mem, Value off) {
    b.create<vector::StoreOp>(loc, v, mem, ValueRange{off});
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

  /// tanh as runtime/kernels/Recurrence.cpp's tanhOf: Eigen's rational
  /// approximation on [-7.9, 7.9], the input itself near 0.
  Value tanh(Value in) {
    Value lim = cst(7.90531110763549805, in);
    Value x = min(lim, max(cst(-7.90531110763549805, in), in));
    Value x2 = fmul(x, x);
    Value p = cst(-2.76076847742355e-16, in);
    for (double c : {2.00018790482477e-13, -8.60467152213735e-11,
                     5.12229709037114e-08, 1.48572235717979e-05,
                     6.37261928875436e-04, 4.89352455891786e-03})
      p = fma(p, x2, cst(c, in));
    Value q = cst(1.19825839466702e-06, in);
    for (double c : {1.18534705686654e-04, 2.26843463243900e-03,
                     4.89352518554385e-03})
      q = fma(q, x2, cst(c, in));
    Value r = fdiv(fmul(x, p), q);
    Value small = lt(b.create<math::AbsFOp>(loc, in), cst(0.0004, in));
    return select(small, in, r);
  }

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
// LSTM
//===----------------------------------------------------------------------===//

/// Forward of one step for batch rows [b0, b0 + rows): gates, cell and
/// hidden state, written to the states row at `out` (offset of step s).
void lstmForwardRows(Gen &g, const Dims &d, Value x, Value u, Value rb,
                     Value states, Value xRow, const Prev &prev, Value out,
                     Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  SmallVector<Value> xb, pb, ob;
  for (int64_t r = 0; r < rows; ++r) {
    Value bi = g.add(b0, r);
    xb.push_back(g.add(xRow, g.mul(bi, N)));
    pb.push_back(g.add(prev.base, g.mul(bi, prev.ld)));
    ob.push_back(g.add(out, g.mul(bi, S)));
  }
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    // z = x + rbias, then z += h_prev . U, gate by gate in registers.
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k)
        acc.push_back(g.fadd(g.load(x, g.add(g.add(xb[r], k * H), c0), w),
                             g.load(rb, g.add(c0, k * H), w)));
    acc = g.forAcc(0, H, acc, [&](Value j, ValueRange a) {
      SmallVector<Value> uj, next;
      Value row = g.add(g.mul(j, N), c0);
      for (int64_t k = 0; k < 4; ++k)
        uj.push_back(g.load(u, g.add(row, k * H), w));
      for (int64_t r = 0; r < rows; ++r) {
        Value h = g.splat(g.scalar(prev.mem, g.add(pb[r], j)), w);
        for (int64_t k = 0; k < 4; ++k)
          next.push_back(g.fma(h, uj[k], a[r * 4 + k]));
      }
      return next;
    });
    // The gate arithmetic, one row at a time (one copy of the activations'
    // code): the pre-activations go through the row's gate slots.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k)
        g.store(acc[r * 4 + k], states,
                g.add(g.add(ob[r], (2 + k) * H), c0));
    const Act ra = d.p.recurrentActivation, a = d.p.activation;
    g.forEach(b0, g.add(b0, rows), [&](Value bi) {
      Value at = g.add(g.add(out, g.mul(bi, S)), c0);
      auto z = [&](int64_t k) {
        return g.load(states, g.add(at, (2 + k) * H), w);
      };
      Value i = g.activate(ra, z(0)), f = g.activate(ra, z(1)),
            c = g.activate(a, z(2)), o = g.activate(ra, z(3));
      Value cp = g.load(
          prev.mem, g.add(g.add(g.add(prev.base, g.mul(bi, prev.ld)), H), c0),
          w);
      Value cell = g.fadd(g.fmul(f, cp), g.fmul(i, c));
      Value h = g.fmul(g.activate(a, cell), o);
      int64_t slot = 0;
      for (Value v : {h, cell, i, f, c, o})
        g.store(v, states, g.add(at, H * slot++));
    });
  });
}

/// Backward of one step for batch rows [b0, b0 + rows): the gate gradients
/// (d x rows) and the carries d c, then the carry d h = d z . U^T.
void lstmGradRows(Gen &g, const Dims &d, Value ut, Value states,
                  Value gstates, Value grad, Value st, Value dxRow,
                  Value dInit, const Prev &prev, Value b0, int64_t rows) {
  const int64_t H = d.H, N = d.N, S = d.S;
  const Act ra = d.p.recurrentActivation, a = d.p.activation;
  SmallVector<Value> zb, cb;
  for (int64_t r = 0; r < rows; ++r) {
    Value bi = g.add(b0, r);
    zb.push_back(g.add(dxRow, g.mul(bi, N)));
    cb.push_back(g.add(dInit, g.mul(bi, 2 * H)));
  }
  // The gate gradients, one row at a time.
  g.forEach(b0, g.add(b0, rows), [&](Value bi) {
    Value srow = g.add(st, g.mul(bi, S)), zrow = g.add(dxRow, g.mul(bi, N)),
          crow = g.add(dInit, g.mul(bi, 2 * H)),
          prow = g.add(prev.base, g.mul(bi, prev.ld));
    g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value at = g.add(srow, c0);
      auto st = [&](int64_t slot) {
        return g.load(states, g.add(at, slot * H), w);
      };
      auto gs = [&](int64_t slot) {
        return g.load(gstates, g.add(at, slot * H), w);
      };
      Value cell = st(1), i = st(2), f = st(3), c = st(4), o = st(5);
      Value ac = g.activate(a, cell);
      Value carry = g.add(crow, c0);
      Value dh = g.load(grad, carry, w), dc = g.load(grad, g.add(carry, H), w);
      Value cp = g.load(prev.mem, g.add(g.add(prow, H), c0), w);
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
        g.store(dz[k], grad, g.add(zat, k * H));
      g.store(g.fmul(dct, f), grad, g.add(carry, H));
    });
  });
  // d h = d z . U^T, one partial sum per gate.
  g.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc(rows * 4, g.cst(0.0, w));
    acc = g.forAcc(0, H, acc, [&](Value j, ValueRange a) {
      SmallVector<Value> uj, next;
      for (int64_t k = 0; k < 4; ++k)
        uj.push_back(g.load(ut, g.add(g.mul(g.add(j, k * H), H), c0), w));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < 4; ++k) {
          Value z = g.scalar(grad, g.add(g.add(zb[r], k * H), j));
          next.push_back(g.fma(g.splat(z, w), uj[k], a[r * 4 + k]));
        }
      return next;
    });
    for (int64_t r = 0; r < rows; ++r) {
      Value sum = g.fadd(g.fadd(acc[r * 4], acc[r * 4 + 1]),
                         g.fadd(acc[r * 4 + 2], acc[r * 4 + 3]));
      g.store(sum, grad, g.add(g.add(cb[r], c0), 0));
    }
  });
}

//===----------------------------------------------------------------------===//
// Shared by the cells
//===----------------------------------------------------------------------===//

/// d U += h_prev^T . d z and d rbias += the column sums of d z for one
/// step: kGradRows rows of d U (16 lanes each) in registers over the batch.
void accumulateKernelGrad(Gen &g, const Dims &d, Value grad, Value dxRow,
                          const Prev &prev, Value dU, Value dRb) {
  const int64_t H = d.H, N = d.N, B = d.B;
  g.forBlocks(H, kGradRows, [&](Value k0, int64_t kc) {
    g.forBlocks(N, kLanes, [&](Value j0, int64_t w) {
      SmallVector<Value> acc;
      for (int64_t k = 0; k < kc; ++k)
        acc.push_back(g.load(grad, g.add(g.add(dU, g.mul(g.add(k0, k), N)), j0), w));
      acc = g.forAcc(0, B, acc, [&](Value bi, ValueRange a) {
        Value z = g.load(grad, g.add(g.add(dxRow, g.mul(bi, N)), j0), w);
        Value hp = g.add(g.add(prev.base, g.mul(bi, prev.ld)), k0);
        SmallVector<Value> next;
        for (int64_t k = 0; k < kc; ++k)
          next.push_back(
              g.fma(g.splat(g.scalar(prev.mem, g.add(hp, k)), w), z, a[k]));
        return next;
      });
      for (int64_t k = 0; k < kc; ++k)
        g.store(acc[k], grad, g.add(g.add(dU, g.mul(g.add(k0, k), N)), j0));
    });
  });
  g.forBlocks(N, kLanes, [&](Value j0, int64_t w) {
    Value at = g.add(dRb, j0);
    SmallVector<Value> acc{g.load(grad, at, w)};
    acc = g.forAcc(0, B, acc, [&](Value bi, ValueRange a) {
      Value z = g.load(grad, g.add(g.add(dxRow, g.mul(bi, N)), j0), w);
      return SmallVector<Value>{g.fadd(a[0], z)};
    });
    g.store(acc[0], grad, at);
  });
}

/// Whether `op` gets a generated step: f32 LSTM with a recurrent kernel
/// that stays in cache.
bool generated(const Dims &d, Type elt) {
  return elt.isF32() && d.p.cell == kernels::RecurrentCell::Lstm &&
         d.H * d.N * 4 <= kMaxKernelBytes && d.T > 0 && d.B > 0 && d.H > 0;
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
void emitForward(Gen &g, const Dims &d, Value x, Value u, Value init,
                 Value rb, Value states) {
  g.forEach(g.idx(0), g.idx(d.T), [&](Value s) {
    Value row = d.p.reverse ? g.sub(g.idx(d.T - 1), s) : s;
    Prev prev = prevOf(g, d, s, init, states);
    Value xRow = g.mul(row, d.B * d.N);
    Value out = g.mul(s, d.B * d.S);
    g.forBlocks(d.B, kRows, [&](Value b0, int64_t rows) {
      lstmForwardRows(g, d, x, u, rb, states, xRow, prev, out, b0, rows);
    });
  });
}

/// The backward over time, from the last step down.
void emitBackward(Gen &g, const Dims &d, Value u, Value init, Value states,
                  Value gstates, Value grad, Value ut) {
  const int64_t T = d.T, B = d.B, H = d.H, N = d.N, S = d.S;
  // U^T [N, H], once.
  g.forEach(g.idx(0), g.idx(H), [&](Value k) {
    g.forEach(g.idx(0), g.idx(N), [&](Value j) {
      g.b.create<memref::StoreOp>(g.loc, g.scalar(u, g.add(g.mul(k, N), j)),
                                  ut, ValueRange{g.add(g.mul(j, H), k)});
    });
  });
  // The accumulators and carries start at zero: d U, d initial, d rbias.
  Value dU = g.idx(T * B * N), dInit = g.idx(T * B * N + H * N),
        dRb = g.idx(T * B * N + H * N + B * d.KH);
  g.forBlocks(H * N + B * d.KH + N, kLanes, [&](Value i, int64_t w) {
    g.store(g.cst(0.0, w), grad, g.add(dU, i));
  });
  g.forEach(g.idx(0), g.idx(T), [&](Value i) {
    Value s = g.sub(g.idx(T - 1), i);
    Value row = d.p.reverse ? i : s;
    Prev prev = prevOf(g, d, s, init, states);
    Value st = g.mul(s, B * S), dxRow = g.mul(row, B * N);
    g.forBlocks(B, kRows, [&](Value b0, int64_t rows) {
      lstmGradRows(g, d, ut, states, gstates, grad, st, dxRow, dInit, prev, b0,
                   rows);
    });
    accumulateKernelGrad(g, d, grad, dxRow, prev, dU, dRb);
  });
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
    Gen g(rewriter, loc);
    Value x = flatInput(rewriter, loc, adaptor.getX());
    Value u = flatInput(rewriter, loc, adaptor.getKernel());
    Value init = flatInput(rewriter, loc, adaptor.getInitialState());
    Value rb = flatInput(rewriter, loc, adaptor.getRecurrentBias());
    Value out = rewriter.create<memref::AllocOp>(
        loc, MemRefType::get(states.getShape(), states.getElementType()),
        rewriter.getI64IntegerAttr(64));
    emitForward(g, *d, x, u, init, rb, flat(rewriter, loc, out));
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
    Gen g(rewriter, loc);
    Value u = flatInput(rewriter, loc, adaptor.getKernel());
    Value init = flatInput(rewriter, loc, adaptor.getInitialState());
    Value st = flatInput(rewriter, loc, adaptor.getStates());
    Value gst = flatInput(rewriter, loc, adaptor.getGradStates());
    auto alloc = [&](ArrayRef<int64_t> shape) -> Value {
      return rewriter.create<memref::AllocOp>(
          loc, MemRefType::get(shape, rewriter.getF32Type()),
          rewriter.getI64IntegerAttr(64));
    };
    Value grad = alloc(gradType.getShape());
    Value ut = alloc({d->N * d->H});
    emitBackward(g, *d, u, init, st, gst, grad, ut);
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
