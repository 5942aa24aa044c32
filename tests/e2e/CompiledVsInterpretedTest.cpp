//===- CompiledVsInterpretedTest.cpp - The two runtimes agree -------------===//
//
// The acceptance: for the MLP, the CNN and the residual model,
// kcc::jit in compiled and in interpreted mode from the same initial weights
// on the same real Fashion-MNIST batches agree on the loss and on every
// weight after each of 10 steps, with Adam and with SGD + momentum; and one
// epoch of the MLP compiled reaches the interpreter's test accuracy.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETestUtil.h"

#include "frontend/training/Jit.h"
#include "frontend/training/Trainer.h"
#include "runtime/Error.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace kcc;

namespace {

/// f32 agreement: each element within `kTol` of the interpreter's value,
/// relative to the larger of the element and the tensor's largest magnitude
/// (a pure per-element relative error is meaningless for weights that pass
/// through zero).
constexpr double kTol = 1e-5;

/// The largest such error over a tensor.
double maxRelError(const NDArray &expected, const NDArray &actual) {
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i)
    scale = std::max(scale, std::abs(expected.at(i)));
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.at(i), a = actual.at(i);
    if (std::isnan(a) || std::isnan(e))
      return INFINITY;
    double denom = std::max({std::abs(e), scale, 1e-30});
    worst = std::max(worst, std::abs(e - a) / denom);
  }
  return worst;
}

struct StepCase {
  std::string model, optimizer;
};

class TenSteps : public ::testing::TestWithParam<StepCase> {};

TEST_P(TenSteps, LossAndEveryWeightAgreeAfterEachStep) {
  const StepCase &c = GetParam();
  const FashionMnist &data = e2e::fashionMnist();
  std::unique_ptr<Model> model = e2e::buildModel(c.model, /*seed=*/3);

  TrainingConfig o;
  o.batch = 32;
  o.optimizer.kind = llvm::cantFail(parseOptimizer(c.optimizer));
  o.metrics = {"accuracy"};
  o.loss.fromLogits = e2e::returnsLogits(c.model);
  if (o.optimizer.kind == OptimizerKind::SGD)
    o.optimizer.momentum = 0.9;
  o.mode = ExecMode::Compiled;
  JitOptions quiet;
  quiet.log = nullptr;
  Executable compiled = jit(*model, o, quiet);
  o.mode = ExecMode::Interpreted;
  Executable interpreted = jit(*model, o, quiet);
  ASSERT_EQ(compiled.weightNames(), interpreted.weightNames());

  std::vector<NDArray> initial = compiled.getWeights();
  BatchIterator batches(data.train, o.batch, /*shuffle=*/true, /*seed=*/11);
  batches.startEpoch(0);
  NDArray x, y;
  double worstLoss = 0, worstWeight = 0;
  std::string worstName;
  for (int s = 0; s < 10; ++s) {
    batches.batch(s, x, y);
    StepResult ri = interpreted.step(x, y);
    StepResult rc = compiled.step(x, y);
    double lossErr = std::abs(ri.loss - rc.loss) / std::abs(ri.loss);
    worstLoss = std::max(worstLoss, lossErr);
    EXPECT_LE(lossErr, kTol) << "step " << s << ": loss interpreted " << ri.loss
                             << ", compiled " << rc.loss;
    ASSERT_EQ(ri.metrics.size(), 1u);
    EXPECT_NEAR(ri.metrics[0], rc.metrics[0], 1.0 / o.batch + 1e-9)
        << "step " << s << ": accuracy";
    std::vector<NDArray> wi = interpreted.getWeights(),
                         wc = compiled.getWeights();
    ASSERT_EQ(wi.size(), wc.size());
    for (size_t k = 0; k < wi.size(); ++k) {
      ASSERT_EQ(wi[k].shape(), wc[k].shape());
      double err = maxRelError(wi[k], wc[k]);
      if (err > worstWeight) {
        worstWeight = err;
        worstName = compiled.weightNames()[k];
      }
      EXPECT_LE(err, kTol) << "step " << s << ": weight '"
                           << compiled.weightNames()[k] << "'";
    }
  }
  // Every weight moved (a step that updates nothing would agree trivially).
  std::vector<NDArray> final = compiled.getWeights();
  for (size_t k = 0; k < initial.size(); ++k)
    EXPECT_GT(maxRelError(initial[k], final[k]), 1e-4)
        << "weight '" << compiled.weightNames()[k] << "' did not change";
  EXPECT_EQ(compiled.iterations(), 10);
  EXPECT_EQ(interpreted.iterations(), 10);
  std::printf("[ e2e ] %s/%s: 10 steps, worst relative error: loss %.2e, "
              "weights %.2e (%s)\n",
              c.model.c_str(), c.optimizer.c_str(), worstLoss, worstWeight,
              worstName.c_str());
}

INSTANTIATE_TEST_SUITE_P(ReferenceModels, TenSteps,
                         ::testing::Values(StepCase{"mlp", "adam"},
                                           StepCase{"mlp", "sgd"},
                                           StepCase{"cnn", "adam"},
                                           StepCase{"cnn", "sgd"},
                                           StepCase{"residual", "adam"},
                                           StepCase{"residual", "sgd"}),
                         [](const auto &info) {
                           return info.param.model + "_" + info.param.optimizer;
                         });

/// One epoch of the Keras tutorial MLP, compiled and interpreted, through
/// the Trainer (fit + evaluate), from the same initial weights.
TEST(OneEpoch, MlpCompiledMatchesInterpreterAccuracy) {
  const FashionMnist &data = e2e::fashionMnist();
  double accuracy[2], stepMs[2];
  for (int k = 0; k < 2; ++k) {
    std::unique_ptr<Model> model = e2e::buildModel("mlp", /*seed=*/1);
    TrainingConfig o;
    o.metrics = {"accuracy"};
    o.mode = k == 0 ? ExecMode::Compiled : ExecMode::Interpreted;
    Trainer trainer(*model, o);
    FitOptions fit;
    fit.epochs = 1;
    fit.batchSize = 32;
    History history = trainer.fit(data.train, fit);
    ASSERT_EQ(history.size(), 1u);
    accuracy[k] = trainer.evaluate(data.test).at("accuracy");
    stepMs[k] = 1e3 * history.epochs[0].stepSeconds / history.epochs[0].steps;
    EXPECT_EQ(trainer.iterations(), 60000 / 32);
    std::printf("[ e2e ] MLP 1 epoch %s: test accuracy %.4f, %.3f ms/step\n",
                execModeName(o.mode), accuracy[k], stepMs[k]);
  }
  EXPECT_GE(accuracy[0], 0.83);
  EXPECT_GE(accuracy[1], 0.83);
  EXPECT_LE(std::abs(accuracy[0] - accuracy[1]), 0.005);
  std::printf("[ e2e ] interpreted / compiled step time: %.2fx\n",
              stepMs[1] / stepMs[0]);
}

} // namespace
