//===- RecurrentCells.h - The gate math of LSTM, GRU, SimpleRNN -*- C++ -*-===//
//
// The equations of the recurrent cells, forward and backward, written once
// for every implementation: templates over an `Ops` that does the
// arithmetic on its `Value` type,
//
//   Value add(Value, Value), sub(Value, Value), mul(Value, Value)
//   Value constant(double, Value like)   // a Value like `like`, all `double`
//   Value activate(RecurrentActivation, Value x)
//   Value activationGrad(RecurrentActivation, Value y)   // from the output y
//
// The kernels of Recurrence.cpp instantiate them on float and double
// scalars, the compiler (codegen/lowering/RecurrenceCells.cpp) on f32
// vectors whose operations emit IR. The loops, the products with the
// recurrent kernel and the layout of the states row (Recurrence.h) belong
// to each implementation; the arithmetic between them is here.
//
// An input may be passed as a value or as a callable that returns it (see
// read): a callable is called where the equation first uses the input, so
// an implementation that emits code emits its loads there. The order in
// which an emitting Ops sees the operations is the order of the IR it
// builds; these functions keep the one the compiler has always generated.
//
// Names: z the pre-activation of a gate, h the hidden state, c the LSTM's
// cell state, d x the gradient of the loss with respect to x.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_RECURRENTCELLS_H
#define KCC_RUNTIME_KERNELS_RECURRENTCELLS_H

#include "runtime/kernels/Recurrence.h"

#include <cstdint>
#include <type_traits>
#include <utility>

namespace kcc {
namespace kernels {
namespace cells {

/// An input of an equation: `input` itself, or what it returns when it is
/// a callable taking no arguments (read at the point of use).
template <typename Input> decltype(auto) read(Input &&input) {
  if constexpr (std::is_invocable_v<Input>)
    return std::forward<Input>(input)();
  else
    return std::forward<Input>(input);
}

/// d h_t, the gradient reaching a step's hidden state: the states'
/// gradient at that step plus the carry from the step after it.
template <typename Ops, typename GradState, typename Carry>
auto hiddenGradient(Ops &ops, GradState &&gradState, Carry &&carry) {
  return ops.add(read(gradState), read(carry));
}

//===----------------------------------------------------------------------===//
// LSTM (Keras's gate order i, f, c, o; here g for the candidate c)
//===----------------------------------------------------------------------===//

/// One LSTM step, in the order of the states row: h, c, i, f, g, o.
template <typename V> struct LstmStep {
  V h, c, i, f, g, o;
};

/// The forward: i = ra(z_i), f = ra(z_f), g = a(z_g), o = ra(z_o),
/// c = f c_prev + i g, h = a(c) o. `preActivation(k)` returns z of gate k.
template <typename Ops, typename PreActivation, typename PrevCell>
auto lstmForward(Ops &ops, const RecurrenceParams &p,
                 PreActivation &&preActivation, PrevCell &&prevCell) {
  using V = typename Ops::Value;
  const RecurrentActivation ra = p.recurrentActivation, a = p.activation;
  V i = ops.activate(ra, preActivation(0));
  V f = ops.activate(ra, preActivation(1));
  V g = ops.activate(a, preActivation(2));
  V o = ops.activate(ra, preActivation(3));
  V cPrev = read(prevCell);
  V c = ops.add(ops.mul(f, cPrev), ops.mul(i, g));
  V h = ops.mul(ops.activate(a, c), o);
  return LstmStep<V>{h, c, i, f, g, o};
}

/// The backward of a step: d z of the four gates, and d c_t (the gradient
/// reaching the cell state, the carry's source: lstmCellCarry).
template <typename V> struct LstmGradients {
  V gates[4];
  V cell;
};

/// From the saved step (h unused), the carries d h and d c from the step
/// after, c_prev, and `gradState(slot)` (the states' gradient of a slot of
/// the states row).
template <typename Ops, typename HiddenCarry, typename CellCarry,
          typename PrevCell, typename GradState>
auto lstmBackward(Ops &ops, const RecurrenceParams &p,
                  const LstmStep<typename Ops::Value> &saved,
                  HiddenCarry &&hiddenCarry, CellCarry &&cellCarry,
                  PrevCell &&prevCell, GradState &&gradState) {
  using V = typename Ops::Value;
  const RecurrentActivation ra = p.recurrentActivation, a = p.activation;
  V activatedCell = ops.activate(a, saved.c);
  V carryH = read(hiddenCarry);
  V carryC = read(cellCarry);
  V cPrev = read(prevCell);
  V dh = hiddenGradient(ops, gradState(0), carryH);
  V dc = ops.add(
      ops.add(gradState(1), carryC),
      ops.mul(ops.mul(dh, saved.o), ops.activationGrad(a, activatedCell)));
  return LstmGradients<V>{
      {ops.mul(ops.add(ops.mul(dc, saved.g), gradState(2)),
               ops.activationGrad(ra, saved.i)),
       ops.mul(ops.add(ops.mul(dc, cPrev), gradState(3)),
               ops.activationGrad(ra, saved.f)),
       ops.mul(ops.add(ops.mul(dc, saved.i), gradState(4)),
               ops.activationGrad(a, saved.g)),
       ops.mul(ops.add(ops.mul(dh, activatedCell), gradState(5)),
               ops.activationGrad(ra, saved.o))},
      dc};
}

/// d c_prev = d c_t f, the cell state's carry into the step before.
template <typename Ops, typename V>
V lstmCellCarry(Ops &ops, const V &cellGradient, const V &forget) {
  return ops.mul(cellGradient, forget);
}

//===----------------------------------------------------------------------===//
// GRU (Keras's gate order z, r, h; hh the candidate)
//===----------------------------------------------------------------------===//

/// The update and reset gates: ra(x + rec), x the input projection of the
/// gate and rec its row of h_prev.U + b.
template <typename Ops, typename Input, typename Recurrent>
auto gruGate(Ops &ops, const RecurrenceParams &p, Input &&input,
             Recurrent &&recurrent) {
  return ops.activate(p.recurrentActivation,
                      ops.add(read(input), read(recurrent)));
}

/// The candidate with reset_after = false: a(x_h + rec_h), rec_h =
/// (r h_prev).U_h + b_h.
template <typename Ops, typename Input, typename Recurrent>
auto gruCandidate(Ops &ops, const RecurrenceParams &p, Input &&input,
                  Recurrent &&recurrent) {
  return ops.activate(p.activation, ops.add(read(input), read(recurrent)));
}

/// The candidate with reset_after: a(x_h + r rec_h), rec_h = (h_prev.U +
/// b)_h.
template <typename Ops, typename Input, typename V>
V gruCandidateResetAfter(Ops &ops, const RecurrenceParams &p, Input &&input,
                         const V &reset, const V &recurrent) {
  return ops.activate(p.activation,
                      ops.add(read(input), ops.mul(reset, recurrent)));
}

/// reset_after = false: r h_prev, the row that multiplies U_h.
template <typename Ops, typename V, typename PrevHidden>
V gruResetHidden(Ops &ops, const V &reset, PrevHidden &&prevHidden) {
  return ops.mul(reset, read(prevHidden));
}

/// h = z h_prev + (1 - z) hh.
template <typename Ops, typename V, typename PrevHidden>
V gruOutput(Ops &ops, const V &update, PrevHidden &&prevHidden,
            const V &candidate) {
  return ops.add(
      ops.mul(update, read(prevHidden)),
      ops.mul(ops.sub(ops.constant(1.0, update), update), candidate));
}

/// d z_h = (d h_t (1 - z) + d hh) a'(hh), `gradCandidate` the states'
/// gradient of the hh slot.
template <typename Ops, typename V, typename GradCandidate>
V gruCandidateGradient(Ops &ops, const RecurrenceParams &p, const V &dh,
                       const V &update, const V &candidate,
                       GradCandidate &&gradCandidate) {
  return ops.mul(
      ops.add(ops.mul(dh, ops.sub(ops.constant(1.0, update), update)),
              read(gradCandidate)),
      ops.activationGrad(p.activation, candidate));
}

/// d z_z = (d h_t (h_prev - hh) + d z) ra'(z).
template <typename Ops, typename V, typename GradUpdate>
V gruUpdateGradient(Ops &ops, const RecurrenceParams &p, const V &dh,
                    const V &prevHidden, const V &candidate, const V &update,
                    GradUpdate &&gradUpdate) {
  return ops.mul(
      ops.add(ops.mul(dh, ops.sub(prevHidden, candidate)), read(gradUpdate)),
      ops.activationGrad(p.recurrentActivation, update));
}

/// d z_r = (d(r m) m + d r) ra'(r), where r multiplies m: rec_h with
/// reset_after (d(r m) = d z_h), h_prev without (d(r m) = d(r h_prev)).
template <typename Ops, typename V, typename GradReset>
V gruResetGradient(Ops &ops, const RecurrenceParams &p, const V &dProduct,
                   const V &multiplied, const V &reset, GradReset &&gradReset) {
  return ops.mul(ops.add(ops.mul(dProduct, multiplied), read(gradReset)),
                 ops.activationGrad(p.recurrentActivation, reset));
}

/// reset_after: d rec_h = d z_h r + d rec_h's states' gradient (the saved
/// (h_prev.U + b)_h slot).
template <typename Ops, typename V, typename GradRecurrent>
V gruRecurrentCandidateGradient(Ops &ops, const V &candidateGradient,
                                const V &reset, GradRecurrent &&gradRecurrent) {
  return ops.add(ops.mul(candidateGradient, reset), read(gradRecurrent));
}

/// d h_prev's direct share: d h_t z.
template <typename Ops, typename V>
V gruHiddenCarry(Ops &ops, const V &dh, const V &update) {
  return ops.mul(dh, update);
}

/// reset_after = false: the carry plus d(r h_prev) r.
template <typename Ops, typename Carry, typename V>
V gruResetCarry(Ops &ops, Carry &&carry, const V &dResetHidden,
                const V &reset) {
  return ops.add(read(carry), ops.mul(dResetHidden, reset));
}

//===----------------------------------------------------------------------===//
// SimpleRNN
//===----------------------------------------------------------------------===//

/// h = a(z).
template <typename Ops, typename V>
V simpleRnnForward(Ops &ops, const RecurrenceParams &p,
                   const V &preActivation) {
  return ops.activate(p.activation, preActivation);
}

/// d z = d h_t a'(h).
template <typename Ops, typename V>
V simpleRnnGradient(Ops &ops, const RecurrenceParams &p, const V &dh,
                    const V &hidden) {
  return ops.mul(dh, ops.activationGrad(p.activation, hidden));
}

} // namespace cells
} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_RECURRENTCELLS_H
