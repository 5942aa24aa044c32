//===- RecurrenceCells.cpp - Generated steps of the recurrent cells -------===//
//
// The steps of LSTM, GRU (reset_after true and false) and SimpleRNN as f32
// vector loop nests, for a block of batch rows [b0, b0 + rows), and the
// loops over time around them. The gate arithmetic is the kernel library's
// (runtime/kernels/RecurrentCells.h, on VectorCellOps); what is here is
// where each value is loaded from and stored to, and the products with U
// (RecurrenceProducts.h) between the equations.
//
// The order of the emitted ops is the generated code's: every load, index
// and store is made where the equations first need it (an input passed to
// an equation as a lambda is read where the equation uses it).
//
// Names in the loop nests: bi a batch row, c0 the first of the w units of
// a block (w <= kLanes), acc sums kept in registers. Offsets into the flat
// memrefs: srow, zrow, crow, prow the start of row bi of the states, the
// d x row, the carries and h_prev; sat, zat, cat, hpa the same at column
// c0, rat the scratch row's; xb, pb, ob the x, h_prev and states rows of
// every row of a block. dht is d h_t, dz* the gradients of the gates'
// pre-activations.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/RecurrenceCells.h"
#include "codegen/lowering/RecurrenceProducts.h"
#include "runtime/kernels/RecurrentCells.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::codegen;
using namespace kcc::codegen::recurrence;

namespace cells = kcc::kernels::cells;

Value GradStates::load(VectorBuilder &vb, const RecurrenceSizes &dims, Value s,
                       Value b, int64_t slot, Value c0, int64_t w) const {
  Value sum;
  for (const GradBox &x : boxes) {
    if (x.s0 > slot * dims.H || x.s1 < (slot + 1) * dims.H)
      continue;
    bool always = x.t0 == 0 && x.t1 == dims.T;
    Value t = s;
    if (!always)
      t = vb.builder.create<arith::MinSIOp>(
          vb.loc, vb.builder.create<arith::MaxSIOp>(vb.loc, s, vb.index(x.t0)),
          vb.index(x.t1 - 1));
    Value at =
        vb.add(vb.mul(vb.add(vb.mul(vb.sub(t, vb.index(x.t0)), dims.B), b),
                      x.s1 - x.s0),
               vb.add(c0, slot * dims.H - x.s0));
    Value v = vb.load(x.mem, at, w);
    if (!always) {
      Value inside = vb.builder.create<arith::AndIOp>(
          vb.loc,
          vb.builder.create<arith::CmpIOp>(vb.loc, arith::CmpIPredicate::sge, s,
                                           vb.index(x.t0)),
          vb.builder.create<arith::CmpIOp>(vb.loc, arith::CmpIPredicate::slt, s,
                                           vb.index(x.t1)));
      v = vb.select(inside, v, vb.constant(-0.0, w));
    }
    sum = sum ? vb.fadd(sum, v) : v;
  }
  return sum ? sum : vb.constant(-0.0, w);
}

namespace {

//===----------------------------------------------------------------------===//
// The cells: one step for the batch rows [b0, b0 + rows)
//===----------------------------------------------------------------------===//

/// LSTM forward. States row: h, c, i, f, g, o.
void emitLstmStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                  const RecurrenceMemrefs &mem, const StepAt &at, Value b0,
                  int64_t rows) {
  const int64_t H = dims.H, N = dims.N, S = dims.S;
  VectorCellOps ops{vb};
  SmallVector<Value> xb = rowsAt(vb, at.xRow, N, b0, rows),
                     pb = rowsAt(vb, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(vb, at.out, S, b0, rows);
  vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    // z = x + rbias, then z += h_prev . U, gate by gate in registers.
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k)
        acc.push_back(
            vb.fadd(vb.load(mem.x, vb.add(vb.add(xb[r], k * H), c0), w),
                    vb.load(mem.rb, vb.add(c0, k * H), w)));
    acc = productBlock(vb, dims, mem.u, 0, c0, w, 4, H, at.prev.mem, pb, acc);
    // The gate arithmetic, one row at a time (one copy of the activations'
    // code): the pre-activations go through the row's gate slots.
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 4; ++k)
        vb.store(acc[r * 4 + k], mem.states,
                 vb.add(vb.add(ob[r], (2 + k) * H), c0), w);
    vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
      Value row = vb.add(vb.add(at.out, vb.mul(bi, S)), c0);
      auto preActivation = [&](int64_t k) {
        return vb.load(mem.states, vb.add(row, (2 + k) * H), w);
      };
      auto prevCell = [&] {
        return vb.load(
            at.prev.mem,
            vb.add(vb.add(vb.add(at.prev.base, vb.mul(bi, at.prev.ld)), H), c0),
            w);
      };
      cells::LstmStep<Value> step =
          cells::lstmForward(ops, dims.p, preActivation, prevCell);
      int64_t slot = 0;
      for (Value v : {step.h, step.c, step.i, step.f, step.g, step.o})
        vb.store(v, mem.states, vb.add(row, H * slot++), w);
    });
  });
}

/// LSTM backward: the gate gradients (the d x row) and the carry d c, one
/// row at a time; then the carry d h = d z . U^T for the block.
void emitLstmGradStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                      const RecurrenceMemrefs &mem, const StepAt &at, Value b0,
                      int64_t rows) {
  const int64_t H = dims.H, N = dims.N, S = dims.S;
  VectorCellOps ops{vb};
  vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
    Value srow = vb.add(at.out, vb.mul(bi, S)),
          zrow = vb.add(at.xRow, vb.mul(bi, N)),
          crow = vb.add(at.dInit, vb.mul(bi, 2 * H)),
          prow = vb.add(at.prev.base, vb.mul(bi, at.prev.ld));
    vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value sat = vb.add(srow, c0);
      auto state = [&](int64_t slot) {
        return vb.load(mem.states, vb.add(sat, slot * H), w);
      };
      auto gradState = [&](int64_t slot) {
        return mem.gradStates.load(vb, dims, at.s, bi, slot, c0, w);
      };
      cells::LstmStep<Value> saved; // h is not read
      saved.c = state(1);
      saved.i = state(2);
      saved.f = state(3);
      saved.g = state(4);
      saved.o = state(5);
      Value carry; // the carries' offset, made where the cell reads them
      auto hiddenCarry = [&] {
        carry = vb.add(crow, c0);
        return vb.load(mem.grad, carry, w);
      };
      auto cellCarry = [&] { return vb.load(mem.grad, vb.add(carry, H), w); };
      auto prevCell = [&] {
        return vb.load(at.prev.mem, vb.add(vb.add(prow, H), c0), w);
      };
      cells::LstmGradients<Value> grads = cells::lstmBackward(
          ops, dims.p, saved, hiddenCarry, cellCarry, prevCell, gradState);
      Value zat = vb.add(zrow, c0);
      for (int64_t k = 0; k < 4; ++k)
        vb.store(grads.gates[k], mem.grad, vb.add(zat, k * H), w);
      vb.store(cells::lstmCellCarry(ops, grads.cell, saved.f), mem.grad,
               vb.add(carry, H), w);
    });
  });
  carryProduct(vb, dims, mem.ut, 0, 4, mem.grad,
               rowsAt(vb, at.xRow, N, b0, rows), mem.grad,
               rowsAt(vb, at.dInit, 2 * H, b0, rows),
               /*accumulate=*/false);
}

/// SimpleRNN forward. States row: h.
void emitSimpleRnnStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                       const RecurrenceMemrefs &mem, const StepAt &at, Value b0,
                       int64_t rows) {
  const int64_t H = dims.H;
  VectorCellOps ops{vb};
  SmallVector<Value> xb = rowsAt(vb, at.xRow, H, b0, rows),
                     pb = rowsAt(vb, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(vb, at.out, H, b0, rows);
  vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      acc.push_back(vb.fadd(vb.load(mem.x, vb.add(xb[r], c0), w),
                            vb.load(mem.rb, c0, w)));
    acc = productBlock(vb, dims, mem.u, 0, c0, w, 1, H, at.prev.mem, pb, acc);
    for (int64_t r = 0; r < rows; ++r)
      vb.store(cells::simpleRnnForward(ops, dims.p, acc[r]), mem.states,
               vb.add(ob[r], c0), w);
  });
}

/// SimpleRNN backward: d z = (d h_t) a'(h), then d h = d z . U^T.
void emitSimpleRnnGradStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                           const RecurrenceMemrefs &mem, const StepAt &at,
                           Value b0, int64_t rows) {
  const int64_t H = dims.H;
  VectorCellOps ops{vb};
  vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
    Value srow = vb.add(at.out, vb.mul(bi, H)),
          zrow = vb.add(at.xRow, vb.mul(bi, H)),
          crow = vb.add(at.dInit, vb.mul(bi, H));
    vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value h = vb.load(mem.states, vb.add(srow, c0), w);
      Value dht = cells::hiddenGradient(
          ops, mem.gradStates.load(vb, dims, at.s, bi, 0, c0, w),
          vb.load(mem.grad, vb.add(crow, c0), w));
      vb.store(cells::simpleRnnGradient(ops, dims.p, dht, h), mem.grad,
               vb.add(zrow, c0), w);
    });
  });
  carryProduct(vb, dims, mem.ut, 0, 1, mem.grad,
               rowsAt(vb, at.xRow, H, b0, rows), mem.grad,
               rowsAt(vb, at.dInit, H, b0, rows),
               /*accumulate=*/false);
}

/// GRU forward, reset_after: h.U + b for the three gates in registers, then
/// per row z, r, the candidate from r * (h.U + b)_h, and h. States row: h,
/// z, r, hh, (h.U + b)_h; the products pass through the z, r and last slots.
void emitGruResetAfterStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                           const RecurrenceMemrefs &mem, const StepAt &at,
                           Value b0, int64_t rows) {
  const int64_t H = dims.H, N = dims.N, S = dims.S;
  VectorCellOps ops{vb};
  SmallVector<Value> pb = rowsAt(vb, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(vb, at.out, S, b0, rows);
  vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 3; ++k)
        acc.push_back(vb.load(mem.rb, vb.add(c0, k * H), w));
    acc = productBlock(vb, dims, mem.u, 0, c0, w, 3, H, at.prev.mem, pb, acc);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 3; ++k)
        vb.store(acc[r * 3 + k], mem.states,
                 vb.add(vb.add(ob[r], (k == 2 ? 4 : 1 + k) * H), c0), w);
    vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
      Value row = vb.add(vb.add(at.out, vb.mul(bi, S)), c0);
      Value xa = vb.add(vb.add(at.xRow, vb.mul(bi, N)), c0);
      auto x = [&](int64_t k) { return vb.load(mem.x, vb.add(xa, k * H), w); };
      auto rec = [&](int64_t slot) {
        return vb.load(mem.states, vb.add(row, slot * H), w);
      };
      Value hp =
          vb.load(at.prev.mem,
                  vb.add(vb.add(at.prev.base, vb.mul(bi, at.prev.ld)), c0), w);
      Value recH = rec(4);
      Value z = cells::gruGate(ops, dims.p, x(0), rec(1));
      Value r = cells::gruGate(ops, dims.p, x(1), rec(2));
      Value hh = cells::gruCandidateResetAfter(
          ops, dims.p, [&] { return x(2); }, r, recH);
      Value h = cells::gruOutput(ops, z, hp, hh);
      int64_t slot = 0;
      for (Value v : {h, z, r, hh})
        vb.store(v, mem.states, vb.add(row, H * slot++), w);
    });
  });
}

/// GRU backward, reset_after: per row the gate gradients (the d x row) and
/// those of h.U + b (the scratch row, [B, 3H]), the carry d h = d h_t z;
/// then d h += d(h.U + b) . U^T for the block.
void emitGruResetAfterGradStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                               const RecurrenceMemrefs &mem, const StepAt &at,
                               Value b0, int64_t rows) {
  const int64_t H = dims.H, N = dims.N, S = dims.S;
  VectorCellOps ops{vb};
  vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
    Value srow = vb.add(at.out, vb.mul(bi, S)),
          zrow = vb.add(at.xRow, vb.mul(bi, N)), rrow = vb.mul(bi, N),
          crow = vb.add(at.dInit, vb.mul(bi, H)),
          prow = vb.add(at.prev.base, vb.mul(bi, at.prev.ld));
    vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
      Value sat = vb.add(srow, c0);
      auto state = [&](int64_t slot) {
        return vb.load(mem.states, vb.add(sat, slot * H), w);
      };
      auto gradState = [&](int64_t slot) {
        return mem.gradStates.load(vb, dims, at.s, bi, slot, c0, w);
      };
      Value z = state(1), r = state(2), hh = state(3), recH = state(4);
      Value hp = vb.load(at.prev.mem, vb.add(prow, c0), w);
      Value carry = vb.add(crow, c0);
      Value dht =
          cells::hiddenGradient(ops, gradState(0), vb.load(mem.grad, carry, w));
      Value dzh = cells::gruCandidateGradient(ops, dims.p, dht, z, hh,
                                              [&] { return gradState(3); });
      Value dzz = cells::gruUpdateGradient(ops, dims.p, dht, hp, hh, z,
                                           [&] { return gradState(1); });
      Value dzr = cells::gruResetGradient(ops, dims.p, dzh, recH, r,
                                          [&] { return gradState(2); });
      Value zat = vb.add(zrow, c0), rat = vb.add(rrow, c0);
      int64_t k = 0;
      for (Value v : {dzz, dzr, dzh})
        vb.store(v, mem.grad, vb.add(zat, H * k++), w);
      k = 0;
      for (Value v :
           {dzz, dzr,
            cells::gruRecurrentCandidateGradient(ops, dzh, r, gradState(4))})
        vb.store(v, mem.scratch, vb.add(rat, H * k++), w);
      vb.store(cells::gruHiddenCarry(ops, dht, z), mem.grad, carry, w);
    });
  });
  carryProduct(vb, dims, mem.ut, 0, 3, mem.scratch,
               rowsAt(vb, vb.index(0), N, b0, rows), mem.grad,
               rowsAt(vb, at.dInit, H, b0, rows), /*accumulate=*/true);
}

/// GRU forward, reset_after = false: z and r from h.U + b, then the
/// candidate from (r * h).U_h + b_h. States row: h, z, r, hh; the products
/// pass through the z, r and h slots, r * h through the hh slot.
void emitGruResetBeforeStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                            const RecurrenceMemrefs &mem, const StepAt &at,
                            Value b0, int64_t rows) {
  const int64_t H = dims.H, N = dims.N, S = dims.S;
  VectorCellOps ops{vb};
  SmallVector<Value> pb = rowsAt(vb, at.prev.base, at.prev.ld, b0, rows),
                     ob = rowsAt(vb, at.out, S, b0, rows);
  auto perRow =
      [&](function_ref<void(Value, Value, Value, Value, int64_t)> body) {
        vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
          Value row = vb.add(at.out, vb.mul(bi, S));
          Value xa = vb.add(at.xRow, vb.mul(bi, N));
          Value hpa = vb.add(at.prev.base, vb.mul(bi, at.prev.ld));
          vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
            body(vb.add(row, c0), vb.add(xa, c0), vb.add(hpa, c0), c0, w);
          });
        });
      };
  vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 2; ++k)
        acc.push_back(vb.load(mem.rb, vb.add(c0, k * H), w));
    acc = productBlock(vb, dims, mem.u, 0, c0, w, 2, H, at.prev.mem, pb, acc);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < 2; ++k)
        vb.store(acc[r * 2 + k], mem.states,
                 vb.add(vb.add(ob[r], (1 + k) * H), c0), w);
  });
  perRow([&](Value row, Value xa, Value hpa, Value, int64_t w) {
    Value z = cells::gruGate(ops, dims.p, vb.load(mem.x, xa, w),
                             vb.load(mem.states, vb.add(row, H), w));
    Value r = cells::gruGate(ops, dims.p, vb.load(mem.x, vb.add(xa, H), w),
                             vb.load(mem.states, vb.add(row, 2 * H), w));
    vb.store(z, mem.states, vb.add(row, H), w);
    vb.store(r, mem.states, vb.add(row, 2 * H), w);
    vb.store(cells::gruResetHidden(ops, r, vb.load(at.prev.mem, hpa, w)),
             mem.states, vb.add(row, 3 * H), w);
  });
  SmallVector<Value> rh;
  for (Value o : ob)
    rh.push_back(vb.add(o, 3 * H));
  vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
    SmallVector<Value> acc(rows, vb.load(mem.rb, vb.add(c0, 2 * H), w));
    acc =
        productBlock(vb, dims, mem.u, 2 * H, c0, w, 1, H, mem.states, rh, acc);
    for (int64_t r = 0; r < rows; ++r)
      vb.store(acc[r], mem.states, vb.add(ob[r], c0), w);
  });
  perRow([&](Value row, Value xa, Value hpa, Value, int64_t w) {
    Value z = vb.load(mem.states, vb.add(row, H), w);
    Value hh =
        cells::gruCandidate(ops, dims.p, vb.load(mem.x, vb.add(xa, 2 * H), w),
                            vb.load(mem.states, row, w));
    Value h = cells::gruOutput(
        ops, z, [&] { return vb.load(at.prev.mem, hpa, w); }, hh);
    vb.store(h, mem.states, row, w);
    vb.store(hh, mem.states, vb.add(row, 3 * H), w);
  });
}

/// GRU backward, reset_after = false: d z_h, d z_z, the carry d h_t z and
/// r * h (scratch [B, H]) per row; d(r * h) = d z_h . U_h^T (scratch [B, H]
/// after the first); d z_r and d h += d(r * h) r per row; then d h +=
/// d z_{z,r} . U_{z,r}^T.
void emitGruResetBeforeGradStep(VectorBuilder &vb, const RecurrenceSizes &dims,
                                const RecurrenceMemrefs &mem, const StepAt &at,
                                Value b0, int64_t rows) {
  const int64_t H = dims.H, N = dims.N, S = dims.S, B = dims.B;
  VectorCellOps ops{vb};
  // body(b, c0, then the offsets of row b, columns c0 of: the states row,
  // the d x row, the carry, h_prev, the scratch row; w).
  auto perRow = [&](function_ref<void(Value, Value, Value, Value, Value, Value,
                                      Value, int64_t)>
                        body) {
    vb.forEach(b0, vb.add(b0, rows), [&](Value bi) {
      Value sat = vb.add(at.out, vb.mul(bi, S));
      Value zat = vb.add(at.xRow, vb.mul(bi, N));
      Value cat = vb.add(at.dInit, vb.mul(bi, H));
      Value hpa = vb.add(at.prev.base, vb.mul(bi, at.prev.ld));
      Value rat = vb.mul(bi, H);
      vb.forBlocks(H, kLanes, [&](Value c0, int64_t w) {
        body(bi, c0, vb.add(sat, c0), vb.add(zat, c0), vb.add(cat, c0),
             vb.add(hpa, c0), vb.add(rat, c0), w);
      });
    });
  };
  perRow([&](Value bi, Value c0, Value sat, Value zat, Value cat, Value hpa,
             Value rat, int64_t w) {
    auto state = [&](int64_t slot) {
      return vb.load(mem.states, vb.add(sat, slot * H), w);
    };
    auto gradState = [&](int64_t slot) {
      return mem.gradStates.load(vb, dims, at.s, bi, slot, c0, w);
    };
    Value z = state(1), r = state(2), hh = state(3);
    Value hp = vb.load(at.prev.mem, hpa, w);
    Value dht =
        cells::hiddenGradient(ops, gradState(0), vb.load(mem.grad, cat, w));
    vb.store(cells::gruCandidateGradient(ops, dims.p, dht, z, hh,
                                         [&] { return gradState(3); }),
             mem.grad, vb.add(zat, 2 * H), w);
    vb.store(cells::gruUpdateGradient(ops, dims.p, dht, hp, hh, z,
                                      [&] { return gradState(1); }),
             mem.grad, zat, w);
    vb.store(cells::gruHiddenCarry(ops, dht, z), mem.grad, cat, w);
    vb.store(cells::gruResetHidden(ops, r, hp), mem.scratch, rat, w);
  });
  SmallVector<Value> zrows = rowsAt(vb, at.xRow, N, b0, rows);
  SmallVector<Value> zh;
  for (Value z : zrows)
    zh.push_back(vb.add(z, 2 * H));
  carryProduct(vb, dims, mem.ut, 2 * H, 1, mem.grad, zh, mem.scratch,
               rowsAt(vb, vb.index(B * H), H, b0, rows), /*accumulate=*/false);
  perRow([&](Value bi, Value c0, Value sat, Value zat, Value cat, Value hpa,
             Value rat, int64_t w) {
    Value r = vb.load(mem.states, vb.add(sat, 2 * H), w);
    Value drh = vb.load(mem.scratch, vb.add(rat, B * H), w);
    Value hp = vb.load(at.prev.mem, hpa, w);
    auto gradReset = [&] {
      return mem.gradStates.load(vb, dims, at.s, bi, 2, c0, w);
    };
    vb.store(cells::gruResetGradient(ops, dims.p, drh, hp, r, gradReset),
             mem.grad, vb.add(zat, H), w);
    vb.store(cells::gruResetCarry(
                 ops, [&] { return vb.load(mem.grad, cat, w); }, drh, r),
             mem.grad, cat, w);
  });
  carryProduct(vb, dims, mem.ut, 0, 2, mem.grad, zrows, mem.grad,
               rowsAt(vb, at.dInit, H, b0, rows), /*accumulate=*/true);
}

/// Where step `s` reads h_prev and c_prev: the initial state at step 0,
/// the previous states row after (one select, so one copy of the step).
PrevState prevOf(VectorBuilder &vb, const RecurrenceSizes &dims, Value s,
                 Value init, Value states) {
  auto dyn = MemRefType::get({ShapedType::kDynamic}, vb.f32);
  Value first = vb.builder.create<arith::CmpIOp>(
      vb.loc, arith::CmpIPredicate::eq, s, vb.index(0));
  Value fromInit = vb.builder.create<memref::CastOp>(vb.loc, dyn, init);
  Value fromStates = vb.builder.create<memref::CastOp>(vb.loc, dyn, states);
  Value before =
      vb.mul(vb.sub(vb.builder.create<arith::MaxSIOp>(vb.loc, s, vb.index(1)),
                    vb.index(1)),
             dims.B * dims.S);
  return {vb.select(first, fromInit, fromStates),
          vb.select(first, vb.index(0), before),
          vb.select(first, vb.index(dims.KH), vb.index(dims.S))};
}

} // namespace

void recurrence::emitForward(VectorBuilder &vb, const RecurrenceSizes &dims,
                             const RecurrenceMemrefs &mem) {
  using Cell = kernels::RecurrentCell;
  vb.forEach(vb.index(0), vb.index(dims.T), [&](Value s) {
    StepAt at;
    Value row = vb.select(mem.reverse, vb.sub(vb.index(dims.T - 1), s), s);
    at.prev = prevOf(vb, dims, s, mem.init, mem.states);
    at.xRow = vb.mul(row, dims.B * dims.N);
    at.out = vb.mul(s, dims.B * dims.S);
    vb.forBlocks(dims.B, kRows, [&](Value b0, int64_t rows) {
      switch (dims.p.cell) {
      case Cell::Lstm:
        return emitLstmStep(vb, dims, mem, at, b0, rows);
      case Cell::Gru:
        return dims.p.resetAfter
                   ? emitGruResetAfterStep(vb, dims, mem, at, b0, rows)
                   : emitGruResetBeforeStep(vb, dims, mem, at, b0, rows);
      case Cell::SimpleRnn:
        return emitSimpleRnnStep(vb, dims, mem, at, b0, rows);
      }
    });
  });
}

void recurrence::emitBackward(VectorBuilder &vb, const RecurrenceSizes &dims,
                              const RecurrenceMemrefs &mem) {
  using Cell = kernels::RecurrentCell;
  const int64_t T = dims.T, B = dims.B, H = dims.H, N = dims.N, S = dims.S;
  // U^T [N, H], once.
  vb.forEach(vb.index(0), vb.index(H), [&](Value k) {
    vb.forEach(vb.index(0), vb.index(N), [&](Value j) {
      vb.builder.create<memref::StoreOp>(
          vb.loc, vb.scalar(mem.u, vb.add(vb.mul(k, N), j)), mem.ut,
          ValueRange{vb.add(vb.mul(j, H), k)});
    });
  });
  // The accumulators and carries start at zero: d U, d initial, d rbias.
  Value dU = vb.index(T * B * N), dInit = vb.index(T * B * N + H * N),
        dRb = vb.index(T * B * N + H * N + B * dims.KH);
  vb.forBlocks(H * N + B * dims.KH + N, kLanes, [&](Value i, int64_t w) {
    vb.store(vb.constant(0.0, w), mem.grad, vb.add(dU, i), w);
  });
  vb.forEach(vb.index(0), vb.index(T), [&](Value i) {
    StepAt at;
    Value s = vb.sub(vb.index(T - 1), i);
    Value row = vb.select(mem.reverse, i, s);
    at.s = s;
    at.prev = prevOf(vb, dims, s, mem.init, mem.states);
    at.out = vb.mul(s, B * S);
    at.xRow = vb.mul(row, B * N);
    at.dU = dU, at.dInit = dInit, at.dRb = dRb;
    vb.forBlocks(B, kRows, [&](Value b0, int64_t rows) {
      switch (dims.p.cell) {
      case Cell::Lstm:
        return emitLstmGradStep(vb, dims, mem, at, b0, rows);
      case Cell::Gru:
        return dims.p.resetAfter
                   ? emitGruResetAfterGradStep(vb, dims, mem, at, b0, rows)
                   : emitGruResetBeforeGradStep(vb, dims, mem, at, b0, rows);
      case Cell::SimpleRnn:
        return emitSimpleRnnGradStep(vb, dims, mem, at, b0, rows);
      }
    });
    // What multiplies U: the gate gradients, except for GRU's reset_after
    // (the gradient of h.U + b, in the scratch rows) and the candidate of
    // reset_after = false (multiplying r * h, also in the scratch).
    bool after = dims.p.cell == Cell::Gru && dims.p.resetAfter;
    bool before = dims.p.cell == Cell::Gru && !dims.p.resetAfter;
    Value src = after ? mem.scratch : mem.grad;
    Value srcBase = after ? vb.index(0) : at.xRow;
    accumulateOuter(vb, dims, at.prev.mem, at.prev.base, at.prev.ld, src,
                    srcBase, N, before ? 2 * H : N, mem.grad, dU);
    if (before)
      accumulateOuter(vb, dims, mem.scratch, vb.index(0), vb.index(H), mem.grad,
                      vb.add(at.xRow, 2 * H), N, H, mem.grad,
                      vb.add(dU, 2 * H));
    accumulateColumnSums(vb, dims, src, srcBase, N, mem.grad, dRb);
  });
}
