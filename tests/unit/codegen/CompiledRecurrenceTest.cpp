//===- CompiledRecurrenceTest.cpp - kc.recurrence, compiled vs interpreted ===//
//
// The compiled lowering of kc.recurrence and kc.recurrence_grad
// (codegen/LowerRecurrence.cpp) generates the f32 steps of every cell as
// loop nests of its own, blocked by 4 batch rows and 16 units; f64 loops
// over the kernel library's step entry points. Against the interpreter (the
// library's whole-sequence kernels): every cell, each activation, both
// directions, one step and many, the fixtures' sizes, and sizes that leave a
// remainder in every blocking (5 or 9 rows, 20, 33 or 37 units).
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
/// its flat gradient for a random gradient of the states.
std::string recurrenceModule(const Case &c) {
  kernels::RecurrenceParams p;
  p.cell = c.cell;
  p.resetAfter = c.resetAfter;
  int64_t gh = kernels::recurrentGates(c.cell) * c.units;
  int64_t s = kernels::recurrentStateWidth(p, c.units);
  int64_t k = kernels::recurrentInitialWidth(c.cell, c.units);
  int64_t n = kernels::recurrenceGradSize(p, c.steps, c.batch, c.units);
  auto t = [](std::initializer_list<int64_t> dims) {
    std::ostringstream os;
    os << "tensor<";
    for (int64_t d : dims)
      os << d << "x";
    os << "$T>";
    return os.str();
  };
  std::string x = t({c.steps, c.batch, gh}), u = t({c.units, gh}),
              h0 = t({c.batch, k}), rb = t({gh}),
              st = t({c.steps, c.batch, s}), g = t({n});
  std::ostringstream os;
  os << "func.func @f(%x: " << x << ", %u: " << u << ", %h0: " << h0
     << ", %rb: " << rb << ", %gs: " << st << ") -> (" << st << ", " << g
     << ") {\n"
     << "  %s = kc.recurrence %x, %u, %h0, %rb " << c.attrs << " : " << x
     << ", " << u << ", " << h0 << ", " << rb << " -> " << st << "\n"
     << "  %g = kc.recurrence_grad %u, %h0, %s, %gs " << c.attrs << " : " << u
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
    {"simple_rnn", "{cell = \"simple_rnn\"}", RecurrentCell::SimpleRnn, true,
     7, 9, 37},
    {"simple_rnn_backwards_relu",
     "{cell = \"simple_rnn\", activation = \"relu\", reverse = true}",
     RecurrentCell::SimpleRnn, true, 5, 6, 7},
};

class CompiledRecurrence : public CompiledVsInterpreted {};

TEST_P(CompiledRecurrence, MatchesTheInterpreter) {
  for (const Case &c : kCases) {
    SCOPED_TRACE(c.name);
    // The activations' approximations (rational tanh, polynomial exp) are
    // within a few ulp of the library's; BPTT over tens of steps adds them.
    check(recurrenceModule(c), {}, type() == "f32" ? 2e-5 : 1e-12, -0.8, 0.8);
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CompiledRecurrence,
                         ::testing::Values("f32", "f64"));

} // namespace
