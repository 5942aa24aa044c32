//===- CompiledRecurrenceTest.cpp - kc.recurrence, compiled vs interpreted ===//
//
// The compiled lowering of kc.recurrence and kc.recurrence_grad
// (codegen/lowering/LowerRecurrence.cpp) generates the f32 steps of every
// cell as loop nests of its own, blocked by 4 batch rows and 16 units; f64
// and large recurrent kernels loop over the kernel library's step entry
// points. Against the interpreter (the library's whole-sequence kernels):
// every cell, each activation, both directions, one step and many, the
// fixtures' sizes, and sizes that leave a remainder in every blocking (5 or
// 9 rows, 20, 33 or 37 units).
//
//===----------------------------------------------------------------------===//

#include "CodegenTestUtil.h"

#include "runtime/kernels/Recurrence.h"

#include <sstream>

using namespace kcc;
using namespace kcc::testing;

namespace {

struct Case {
  const char *name;
  const char *attrs; ///< the ops' attribute dictionary
  kernels::RecurrentCell cell;
  bool resetAfter;
  int64_t steps, batch, units;
};

/// @f runs the forward and the backward of one recurrence: its states and
/// its flat gradient for a random gradient of the states. `sparse`: that
/// gradient is assembled as the gradients of slices are, zeros joined by
/// kc.concat and summed by kc.add (the compiled backward reads only the
/// nonzero parts): h gets the last step's gradient plus one for every step,
/// the second slot (LSTM's c, GRU's z) the first step's (the step T-1 of the
/// processing order reads first, step 0 last).
std::string recurrenceModule(const Case &c, bool sparse) {
  kernels::RecurrenceParams p;
  p.cell = c.cell;
  p.resetAfter = c.resetAfter;
  int64_t gh = kernels::recurrentGates(c.cell) * c.units;
  int64_t s = kernels::recurrentStateWidth(p, c.units);
  int64_t k = kernels::recurrentInitialWidth(c.cell, c.units);
  int64_t n = kernels::recurrenceGradSize(p, c.steps, c.batch, c.units);
  int64_t T = c.steps, B = c.batch, H = c.units;
  auto t = [](std::initializer_list<int64_t> dims) {
    std::ostringstream os;
    os << "tensor<";
    for (int64_t d : dims)
      os << d << "x";
    os << "$T>";
    return os.str();
  };
  std::string x = t({T, B, gh}), u = t({H, gh}), h0 = t({B, k}), rb = t({gh}),
              st = t({T, B, s}), g = t({n}), seq = t({T, B, H}),
              one = t({1, B, H});
  std::ostringstream os;
  os << "func.func @f(%x: " << x << ", %u: " << u << ", %h0: " << h0
     << ", %rb: " << rb;
  if (sparse)
    os << ", %last: " << one << ", %first: " << one << ", %every: " << seq;
  else
    os << ", %gs: " << st;
  os << ") -> (" << st << ", " << g << ") {\n"
     << "  %s = kc.recurrence %x, %u, %h0, %rb " << c.attrs << " : " << x
     << ", " << u << ", " << h0 << ", " << rb << " -> " << st << "\n";
  if (sparse) {
    std::string rest = T > 1 ? t({T - 1, B, H}) : "";
    if (T > 1)
      os << "  %z = kc.constant dense<0.0> : " << rest << "\n"
         << "  %l = kc.concat %z, %last {axis = 0 : i64} : (" << rest << ", "
         << one << ") -> " << seq << "\n"
         << "  %f = kc.concat %first, %z {axis = 0 : i64} : (" << one << ", "
         << rest << ") -> " << seq << "\n";
    else
      os << "  %l = kc.add %last, %last : " << seq << "\n"
         << "  %f = kc.add %first, %first : " << seq << "\n";
    os << "  %h = kc.add %l, %every : " << seq << "\n";
    if (s > H) {
      os << "  %cols = kc.concat %h, %f {axis = 2 : i64} : (" << seq << ", "
         << seq << ") -> " << t({T, B, 2 * H}) << "\n";
      if (s > 2 * H)
        os << "  %zr = kc.constant dense<0.0> : " << t({T, B, s - 2 * H})
           << "\n"
           << "  %gs = kc.concat %cols, %zr {axis = 2 : i64} : ("
           << t({T, B, 2 * H}) << ", " << t({T, B, s - 2 * H}) << ") -> " << st
           << "\n";
      else
        os << "  %gs = kc.add %cols, %cols : " << st << "\n";
    } else {
      os << "  %gs = kc.add %h, %f : " << st << "\n";
    }
  }
  os << "  %g = kc.recurrence_grad %u, %h0, %s, %gs " << c.attrs << " : " << u
     << ", " << h0 << ", " << st << ", " << st << " -> " << g << "\n"
     << "  return %s, %g : " << st << ", " << g << "\n}\n";
  return os.str();
}

using kernels::RecurrentCell;

const Case kCases[] = {
    {"lstm", "{cell = \"lstm\"}", RecurrentCell::Lstm, true, 6, 5, 20},
    {"lstm_one_step", "{cell = \"lstm\"}", RecurrentCell::Lstm, true, 1, 4, 3},
    {"lstm_wide", "{cell = \"lstm\"}", RecurrentCell::Lstm, true, 3, 9, 37},
    {"lstm_backwards_hard_sigmoid",
     "{cell = \"lstm\", reverse = true, recurrent_activation = "
     "\"hard_sigmoid\"}",
     RecurrentCell::Lstm, true, 5, 3, 2},
    {"lstm_relu_linear",
     "{cell = \"lstm\", activation = \"relu\", recurrent_activation = "
     "\"linear\"}",
     RecurrentCell::Lstm, true, 2, 8, 16},
    {"lstm_backwards_keras_sizes", "{cell = \"lstm\", reverse = true}",
     RecurrentCell::Lstm, true, 40, 32, 12},
    // A recurrent kernel beyond 256 KiB: the library's step entry points.
    {"lstm_library_steps", "{cell = \"lstm\"}", RecurrentCell::Lstm, true, 2, 3,
     130},
    {"gru", "{cell = \"gru\"}", RecurrentCell::Gru, true, 5, 5, 20},
    {"gru_keras_sizes", "{cell = \"gru\"}", RecurrentCell::Gru, true, 60, 32,
     10},
    {"gru_backwards_hard_sigmoid",
     "{cell = \"gru\", reverse = true, recurrent_activation = "
     "\"hard_sigmoid\"}",
     RecurrentCell::Gru, true, 4, 9, 33},
    {"gru_reset_before", "{cell = \"gru\", reset_after = false}",
     RecurrentCell::Gru, false, 6, 5, 20},
    {"gru_reset_before_backwards_linear",
     "{cell = \"gru\", reset_after = false, reverse = true, activation = "
     "\"linear\"}",
     RecurrentCell::Gru, false, 3, 3, 5},
    {"simple_rnn", "{cell = \"simple_rnn\"}", RecurrentCell::SimpleRnn, true, 7,
     9, 37},
    {"simple_rnn_backwards_relu",
     "{cell = \"simple_rnn\", activation = \"relu\", reverse = true}",
     RecurrentCell::SimpleRnn, true, 5, 6, 7},
};

class CompiledRecurrence : public CompiledVsInterpreted {};

TEST_P(CompiledRecurrence, MatchesTheInterpreter) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    // The activations are the library's (Tanh.h, Exp.h) bit for bit; the
    // products sum in another order, and BPTT over tens of steps adds those
    // roundings.
    for (bool sparse : {false, true}) {
      SCOPED_TRACE(sparse ? "sparse gradient" : "dense gradient");
      check(recurrenceModule(c, sparse), {}, type() == "f32" ? 2e-5 : 1e-12,
            -0.8, 0.8);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CompiledRecurrence,
                         ::testing::Values("f32", "f64"));

} // namespace
