//===- NonFiniteStepTest.cpp - A NaN or inf weight, both modes ------------===//
//
// The reference MLP and CNN with one NaN (or inf) weight in their first
// layer, one Adam step compiled and one interpreted from the same weights on
// the same batch: both losses are non-finite, and every updated weight and
// optimizer slot agrees, NaN where NaN. The numerics check then names the
// layer where the first non-finite value appears.
//
//===----------------------------------------------------------------------===//

#include "engine/NumericsCheck.h"
#include "frontend/Trace.h"
#include "frontend/models/ReferenceModels.h"
#include "frontend/training/Jit.h"
#include "runtime/Error.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

using namespace kcc;

namespace {

struct Case {
  std::string model;
  double poison;
  std::string name;
};

std::unique_ptr<Model> build(const std::string &name) {
  if (name == "mlp")
    return models::buildMlp(3);
  return models::buildCnn(3);
}

void expectSame(const std::vector<NDArray> &interpreted,
                const std::vector<NDArray> &compiled, const std::string &what) {
  ASSERT_EQ(interpreted.size(), compiled.size()) << what;
  for (size_t k = 0; k < interpreted.size(); ++k) {
    ASSERT_EQ(interpreted[k].shape(), compiled[k].shape()) << what << " " << k;
    int failures = 0;
    for (int64_t i = 0; i < interpreted[k].numel() && failures < 5; ++i) {
      double e = interpreted[k].at(i), a = compiled[k].at(i);
      bool ok = std::isnan(e) ? std::isnan(a)
                : std::isinf(e)
                    ? e == a
                    : std::abs(e - a) <= 1e-4 * std::max(1.0, std::abs(e));
      if (!ok) {
        ++failures;
        ADD_FAILURE() << what << " " << k << " element " << i
                      << ": interpreted " << e << ", compiled " << a;
      }
    }
  }
}

class NonFiniteStep : public ::testing::TestWithParam<Case> {};

TEST_P(NonFiniteStep, BothModesAgreeNaNWhereNaN) {
  const Case &c = GetParam();
  TrainingConfig config;
  config.batch = 16;
  config.metrics = {"accuracy"};

  std::mt19937 gen(11);
  std::uniform_real_distribution<float> pixel(0, 1);
  NDArray x = NDArray::empty({config.batch, 28, 28, 1}, DType::F32);
  NDArray y = NDArray::empty({config.batch}, DType::I32);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, pixel(gen));
  for (int64_t i = 0; i < y.numel(); ++i)
    y.set(i, i % 10);

  std::vector<StepResult> results;
  std::vector<std::vector<NDArray>> weights, state;
  std::optional<StepInputs> before;
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    std::unique_ptr<Model> model = build(c.model);
    std::vector<NDArray> w = model->getWeights();
    w[0].set(7, c.poison); // the first layer's kernel
    model->setWeights(w);
    config.mode = mode;
    JitOptions options;
    options.log = nullptr;
    Executable exe = jit(*model, config, options);
    if (mode == ExecMode::Interpreted)
      before = captureStepInputs(exe);
    results.push_back(exe.step(x, y));
    weights.push_back(exe.getWeights());
    state.push_back(exe.getOptimizerState());
  }
  for (size_t m = 0; m < 2; ++m)
    EXPECT_FALSE(std::isfinite(results[m].loss))
        << (m ? "interpreted" : "compiled") << " loss " << results[m].loss;
  EXPECT_EQ(std::isnan(results[0].loss), std::isnan(results[1].loss));
  expectSame(weights[1], weights[0], "weight");
  expectSame(state[1], state[0], "optimizer slot");
  int64_t nans = 0;
  for (const NDArray &w : weights[1])
    nans += countNonFinite(w).nans;
  EXPECT_GT(nans, 0) << "the update spreads the NaN";

  // Re-run the step op by op: the first non-finite value is the first
  // layer's output, and the poisoned kernel is named as its input.
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  std::unique_ptr<Model> model = build(c.model);
  auto module = buildTrainModule(ctx, *model, config);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  std::optional<NonFiniteOp> first = checkTrainStep(step, *before, x, y);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->layer, c.model == "mlp" ? "dense" : "conv2d")
      << first->describe();
  EXPECT_EQ(first->function, "train_step");
  ASSERT_FALSE(first->nonFiniteArguments.empty());
  EXPECT_EQ(first->nonFiniteArguments[0],
            c.model == "mlp" ? "dense/kernel" : "conv2d/kernel");
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

INSTANTIATE_TEST_SUITE_P(Models, NonFiniteStep,
                         ::testing::Values(Case{"mlp", kNaN, "mlp_nan"},
                                           Case{"mlp", kInf, "mlp_inf"},
                                           Case{"cnn", kNaN, "cnn_nan"},
                                           Case{"cnn", kInf, "cnn_inf"}),
                         [](const auto &info) { return info.param.name; });

TEST(NumericsCheck, FiniteStepFindsNothing) {
  TrainingConfig config;
  config.batch = 8;
  std::unique_ptr<Model> model = build("mlp");
  JitOptions options;
  options.log = nullptr;
  config.mode = ExecMode::Interpreted;
  Executable exe = jit(*model, config, options);
  NDArray x = NDArray::zeros({8, 28, 28, 1}, DType::F32);
  NDArray y = NDArray::zeros({8}, DType::I32);
  StepInputs before = captureStepInputs(exe);
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  auto module = buildTrainModule(ctx, *model, config);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  EXPECT_FALSE(checkTrainStep(step, before, x, y));
  // A step with the wrong number of weights is refused, not misbound.
  before.params.pop_back();
  EXPECT_THROW(checkTrainStep(step, before, x, y), Error);
}

} // namespace
