//===- RecurrenceGradientsTest.cpp - BPTT of kc.recurrence vs differences -===//
//
// kc.recurrence's gradient is kc.recurrence_grad, the reverse loop over the
// saved states. The loss sum(states * R) weighs every state slot (h, LSTM's
// c, the gate values the backward reads), so the check covers the gradient
// flowing into each of them as well as into the input projection, the
// recurrent kernel, the initial state and the recurrent bias.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "runtime/kernels/Recurrence.h"

#include "gtest/gtest.h"

#include <sstream>

using namespace kcc;
using namespace kcc::test;

namespace {

struct RecurrenceCase {
  kernels::RecurrentCell cell;
  const char *attrs; ///< the op's attribute dictionary
};

void checkCell(const RecurrenceCase &c, int64_t steps, int64_t batch,
               int64_t units, unsigned seed) {
  mlir::MLIRContext ctx;
  int64_t gh = kernels::recurrentGates(c.cell) * units;
  kernels::RecurrenceParams params;
  params.cell = c.cell;
  params.resetAfter =
      std::string(c.attrs).find("reset_after = false") == std::string::npos;
  int64_t width = kernels::recurrentStateWidth(params, units);
  Shape x{steps, batch, gh}, kernel{units, gh},
      initial{batch, kernels::recurrentInitialWidth(c.cell, units)}, rbias{gh},
      states{steps, batch, width};
  std::vector<std::string> types = {f64Tensor(x), f64Tensor(kernel),
                                    f64Tensor(initial), f64Tensor(rbias)};
  std::ostringstream body;
  body << "%y = kc.recurrence %x0, %x1, %x2, %x3 " << c.attrs << " : "
       << types[0] << ", " << types[1] << ", " << types[2] << ", " << types[3]
       << " -> " << f64Tensor(states);
  SCOPED_TRACE(body.str());
  EXPECT_GRADIENTS_MATCH(
      checkOp(ctx, body.str(), types, f64Tensor(states),
              {uniform(x, -1, 1, seed), uniform(kernel, -0.8, 0.8, seed + 1),
               uniform(initial, -0.5, 0.5, seed + 2),
               uniform(rbias, -0.3, 0.3, seed + 3)}));
}

using kernels::RecurrentCell;

TEST(RecurrenceGradients, Lstm) {
  checkCell({RecurrentCell::Lstm, "{cell = \"lstm\"}"}, 4, 2, 3, 10);
}

TEST(RecurrenceGradients, LstmBackwardsWithHardSigmoid) {
  checkCell({RecurrentCell::Lstm, "{cell = \"lstm\", reverse = true, "
                                  "recurrent_activation = \"hard_sigmoid\"}"},
            5, 3, 2, 20);
}

TEST(RecurrenceGradients, GruResetAfter) {
  checkCell({RecurrentCell::Gru, "{cell = \"gru\"}"}, 4, 2, 3, 30);
}

TEST(RecurrenceGradients, GruResetBefore) {
  checkCell({RecurrentCell::Gru, "{cell = \"gru\", reset_after = false}"}, 4, 2,
            3, 40);
}

TEST(RecurrenceGradients, GruBackwardsLinear) {
  checkCell({RecurrentCell::Gru,
             "{cell = \"gru\", reverse = true, activation = \"linear\"}"},
            3, 2, 2, 50);
}

TEST(RecurrenceGradients, SimpleRnnTanh) {
  checkCell({RecurrentCell::SimpleRnn, "{cell = \"simple_rnn\"}"}, 6, 2, 3, 60);
}

TEST(RecurrenceGradients, SimpleRnnBackwardsRelu) {
  checkCell({RecurrentCell::SimpleRnn,
             "{cell = \"simple_rnn\", reverse = true, activation = \"relu\"}"},
            5, 2, 3, 70);
}

/// One step: the gradient reaches the initial state directly.
TEST(RecurrenceGradients, SingleStepLstm) {
  checkCell({RecurrentCell::Lstm, "{cell = \"lstm\"}"}, 1, 2, 2, 80);
}

} // namespace
