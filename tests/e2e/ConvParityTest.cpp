//===- ConvParityTest.cpp - kcc's convolution layers train as Keras's do --===//
//
// The fixtures of scripts/keras-fixtures/make_conv_fixtures.py, written by
// Keras 3 itself: strided, dilated and grouped Conv2D; DepthwiseConv2D and
// SeparableConv2D (depth multipliers, strides, dilation); Conv2DTranspose;
// a MobileNet-style model. From Keras's initial weights, on Keras's batch,
// kcc must reproduce, compiled and interpreted: Keras's predict before and
// after 5 Adam steps (1e-5), each step's loss (1e-4 relative) and, for the
// MobileNet's BatchNormalization layers, the moving statistics (1e-4, as
// BatchNormParityTest).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Value &convJson() {
  static const json::Value value = e2e::readFixtureJson("conv.json");
  return value;
}

using Param = std::tuple<std::string, ExecMode>;

class ConvParity : public ::testing::TestWithParam<Param> {};

TEST_P(ConvParity, StepsAndPredictMatchKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &root = *convJson().getAsObject();
  ASSERT_EQ(*root.getInteger("steps"), 5);
  const json::Object &record = *root.getObject(name);

  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture(name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);

  NDArray x, y;
  e2e::kerasBatch(x, y);
  Executable exe =
      e2e::jitQuietly(*imported.model, e2e::kerasAdamConfig(record, mode));

  double worstInitial = e2e::comparePredict(
      exe.predict(x), *record.getArray("initial_predict"), name + " initial");
  std::vector<double> expected = e2e::numbers(*record.getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  double worstLoss = e2e::expectKerasLosses(exe, x, y, expected, name).relative;

  // BatchNormalization's moving statistics after the steps ("layer/weight"
  // in Model::parameters() order).
  double worstStats = 0;
  int checkedStats = 0;
  if (const json::Object *stats = record.getObject("moving_stats")) {
    std::vector<Parameter> params = imported.model->parameters();
    std::vector<NDArray> after = exe.getWeights();
    ASSERT_EQ(after.size(), params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      llvm::StringRef layer, weight;
      std::tie(layer, weight) = llvm::StringRef(params[i].name).rsplit('/');
      if (weight != "moving_mean" && weight != "moving_variance")
        continue;
      const json::Object *s = stats->getObject(layer);
      ASSERT_TRUE(s && s->getArray(weight)) << params[i].name;
      std::vector<double> want = e2e::numbers(*s->getArray(weight));
      ASSERT_EQ(static_cast<int64_t>(want.size()), after[i].numel());
      for (size_t j = 0; j < want.size(); ++j) {
        double err = std::abs(after[i].at(j) - want[j]);
        worstStats = std::max(worstStats, err);
        EXPECT_LE(err, 1e-4) << params[i].name << "[" << j << "]: Keras "
                             << want[j] << ", kcc " << after[i].at(j);
      }
      ++checkedStats;
    }
    EXPECT_EQ(checkedStats, 2 * static_cast<int>(stats->size()));
  }
  double worstFinal = e2e::comparePredict(
      exe.predict(x), *record.getArray("final_predict"), name + " final");
  std::printf("[ keras ] %s (%s): worst loss relative error %.2e, moving "
              "statistics error %.2e (%d), predict error %.2e initial, %.2e "
              "after 5 steps\n",
              name.c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted",
              worstLoss, worstStats, checkedStats, worstInitial, worstFinal);
}

INSTANTIATE_TEST_SUITE_P(
    KerasConvFixtures, ConvParity,
    ::testing::Combine(::testing::Values("conv_windows", "conv_depthwise",
                                         "conv_transpose", "mobilenet"),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// LeNet-5 as written today (tanh convolutions, padding="same",
/// AveragePooling2D; lenet/, make_lenet_fixture.py), trained with the
/// optimizer of its own compile config: SGD with momentum 0.9.
class LeNetParity : public ::testing::TestWithParam<ExecMode> {};

TEST_P(LeNetParity, StepsWithItsCompileConfigMatchKeras) {
  ExecMode mode = GetParam();
  static const json::Value value = e2e::readFixtureJson("lenet/lenet.json");
  const json::Object &record = *value.getAsObject()->getObject("lenet");
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("lenet/lenet.keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  EXPECT_EQ(config.optimizer.kind, OptimizerKind::SGD);
  EXPECT_EQ(config.optimizer.momentum, 0.9);
  config.batch = 32;
  config.mode = mode;

  NDArray x, y;
  e2e::kerasBatch(x, y);
  Executable exe = e2e::jitQuietly(*imported.model, config);
  double worstInitial = e2e::comparePredict(
      exe.predict(x), *record.getArray("initial_predict"), "lenet initial");
  std::vector<double> expected = e2e::numbers(*record.getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  double worstLoss =
      e2e::expectKerasLosses(exe, x, y, expected, "lenet").relative;
  double worstFinal = e2e::comparePredict(
      exe.predict(x), *record.getArray("final_predict"), "lenet final");
  std::printf("[ keras ] lenet (%s): worst loss relative error %.2e, predict "
              "error %.2e initial, %.2e after 5 steps\n",
              mode == ExecMode::Compiled ? "compiled" : "interpreted",
              worstLoss, worstInitial, worstFinal);
}

INSTANTIATE_TEST_SUITE_P(KerasLeNetFixture, LeNetParity,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const auto &info) {
                           return info.param == ExecMode::Compiled
                                      ? std::string("compiled")
                                      : std::string("interpreted");
                         });

} // namespace
