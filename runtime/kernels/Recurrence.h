//===- Recurrence.h - LSTM, GRU and SimpleRNN over time ---------*- C++ -*-===//
//
// The kernels of kc.recurrence and kc.recurrence_grad: one time step of a
// recurrent cell, forward and backward, on raw row-major buffers, and the
// whole sequence as a loop over those steps. The interpreter and eager mode
// call the loops here. The gate arithmetic of every cell is written once,
// in RecurrentCells.h: these steps run it on scalars, and compiled f32 code
// generates its own steps for the static sizes from the same equations on
// vectors (codegen/lowering/RecurrenceCells.cpp; activations alike to
// rounding); f64 and very large recurrent kernels run the loop as an scf.for
// calling the step entry points of runtime/LibraryCalls.h.
//
// Layouts, with T steps, B examples, H units and G gates (LSTM 4, GRU 3,
// SimpleRNN 1), all time-major:
//   x       [T, B, G*H]  the input projection x.W + b, Keras's gate order
//                        (LSTM i, f, c, o; GRU z, r, h)
//   kernel  [H, G*H]     the recurrent kernel U
//   initial [B, K*H]     the initial state: LSTM [h | c] (K = 2), else h
//   rbias   [G*H]        a bias added to h.U (GRU reset_after's recurrent
//                        bias; zeros for the other cells)
//   states  [T, B, S]    row s holds step s (in processing order: step s
//                        reads x row T-1-s when `reverse`): its h, then
//                        what the backward needs, per cell:
//                          LSTM            h, c, i, f, g, o          S = 6H
//                          GRU reset_after h, z, r, hh, (h.U + b)_h  S = 5H
//                          GRU             h, z, r, hh               S = 4H
//                          SimpleRNN       h                         S = H
// The gradient is one flat buffer: d x [T*B*G*H], d kernel [H*G*H],
// d initial [B*K*H], d rbias [G*H], in that order.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_RECURRENCE_H
#define KCC_RUNTIME_KERNELS_RECURRENCE_H

#include "runtime/NDArray.h"

#include <cstdint>
#include <string>

namespace kcc {
namespace kernels {

enum class RecurrentCell : int64_t { Lstm = 0, Gru = 1, SimpleRnn = 2 };
/// The activations a cell may use, as Keras names them; hard_sigmoid is
/// Keras 3's relu6(x + 3) / 6.
enum class RecurrentActivation : int64_t {
  Tanh = 0,
  Sigmoid = 1,
  Relu = 2,
  Linear = 3,
  HardSigmoid = 4
};

struct RecurrenceParams {
  RecurrentCell cell = RecurrentCell::Lstm;
  /// GRU only: Keras's reset_after (the reset gate applied after h.U).
  bool resetAfter = true;
  RecurrentActivation activation = RecurrentActivation::Tanh;
  RecurrentActivation recurrentActivation = RecurrentActivation::Sigmoid;
  /// Keras's go_backwards: step s reads input row T-1-s.
  bool reverse = false;
};

// Inline, so the verifiers of ir/ use them without linking the kernels.

/// "lstm", "gru", "simple_rnn"; false for any other name.
inline bool parseRecurrentCell(const std::string &name, RecurrentCell &cell) {
  if (name == "lstm")
    cell = RecurrentCell::Lstm;
  else if (name == "gru")
    cell = RecurrentCell::Gru;
  else if (name == "simple_rnn")
    cell = RecurrentCell::SimpleRnn;
  else
    return false;
  return true;
}
/// "tanh", "sigmoid", "relu", "linear", "hard_sigmoid".
inline bool parseRecurrentActivation(const std::string &name,
                                     RecurrentActivation &a) {
  using A = RecurrentActivation;
  if (name == "tanh")
    a = A::Tanh;
  else if (name == "sigmoid")
    a = A::Sigmoid;
  else if (name == "relu")
    a = A::Relu;
  else if (name == "linear")
    a = A::Linear;
  else if (name == "hard_sigmoid")
    a = A::HardSigmoid;
  else
    return false;
  return true;
}
/// The name parseRecurrentCell reads back.
inline const char *recurrentCellName(RecurrentCell cell) {
  switch (cell) {
  case RecurrentCell::Lstm:
    return "lstm";
  case RecurrentCell::Gru:
    return "gru";
  case RecurrentCell::SimpleRnn:
    break;
  }
  return "simple_rnn";
}
/// The names the two parsers accept, for diagnostics.
inline const char *recurrentCellNames() { return "lstm, gru, simple_rnn"; }
inline const char *recurrentActivationNames() {
  return "tanh, sigmoid, relu, linear, hard_sigmoid";
}

/// G, the gates of a cell.
inline int64_t recurrentGates(RecurrentCell cell) {
  return cell == RecurrentCell::Lstm ? 4 : cell == RecurrentCell::Gru ? 3 : 1;
}
/// S, the width of a states row, for `units` H.
inline int64_t recurrentStateWidth(const RecurrenceParams &p, int64_t units) {
  switch (p.cell) {
  case RecurrentCell::Lstm:
    return 6 * units;
  case RecurrentCell::Gru:
    return (p.resetAfter ? 5 : 4) * units;
  case RecurrentCell::SimpleRnn:
    break;
  }
  return units;
}
/// K*H, the width of the initial state.
inline int64_t recurrentInitialWidth(RecurrentCell cell, int64_t units) {
  return cell == RecurrentCell::Lstm ? 2 * units : units;
}
/// Elements of the flat gradient buffer.
inline int64_t recurrenceGradSize(const RecurrenceParams &p, int64_t steps,
                                  int64_t batch, int64_t units) {
  int64_t GH = recurrentGates(p.cell) * units;
  return steps * batch * GH + units * GH +
         batch * recurrentInitialWidth(p.cell, units) + GH;
}

struct RecurrenceDims {
  int64_t steps = 0, batch = 0, units = 0;
};

/// Step `step` of the forward: writes states row `step` from row
/// `step - 1` (or `initial` at step 0).
template <typename T>
void recurrenceStep(const RecurrenceParams &p, const RecurrenceDims &d,
                    const T *x, const T *kernel, const T *initial,
                    const T *rbias, T *states, int64_t step);
/// Step `step` of the backward, run for step = T-1 down to 0: adds this
/// step's share to d kernel and d rbias, writes its rows of d x, and keeps
/// the gradient flowing into the previous step's state in the d initial
/// slot (the step at T-1 zeroes the accumulators first), so that after
/// step 0 the buffer holds every gradient.
template <typename T>
void recurrenceGradStep(const RecurrenceParams &p, const RecurrenceDims &d,
                        const T *kernel, const T *initial, const T *states,
                        const T *gradStates, T *grad, int64_t step);

/// The whole forward, [T, B, G*H] x [H, G*H] -> [T, B, S].
void recurrence(const RecurrenceParams &p, const NDArray &x,
                const NDArray &kernel, const NDArray &initial,
                const NDArray &rbias, NDArray &states);
/// The whole backward into the flat gradient buffer.
void recurrenceGrad(const RecurrenceParams &p, const NDArray &kernel,
                    const NDArray &initial, const NDArray &states,
                    const NDArray &gradStates, NDArray &grad);

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_RECURRENCE_H
