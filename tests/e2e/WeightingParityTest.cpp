//===- WeightingParityTest.cpp - class_weight and sample_weight as Keras --===//
//
// tests/fixtures/keras/weighting (written by Keras 3 itself, see
// scripts/keras-fixtures/make_weighting_fixtures.py): a 784-8-10 model with
// Adam, 5 train_on_batch steps on the fixed batch with Keras's class_weight
// and with per-example sample_weight. kcc, compiled and interpreted, must
// reproduce each step's loss (Keras's weighted sum_over_batch_size) within
// 1e-4 relative and its accuracy (which Keras 3 leaves unweighted: only
// weighted_metrics see the weights), and the unweighted step must not take
// a weight argument at all.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Trainer.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

using e2e::numbers;

const json::Object &cases() {
  static const json::Value root =
      e2e::readFixtureJson("weighting/weighting.json");
  return *root.getAsObject()->getObject("cases");
}

struct Mode {
  ExecMode mode;
  const char *name;
};

class WeightingParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(WeightingParity, FiveStepsReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &record = *cases().getObject(name);
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("weighting/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value());
  TrainingConfig config = *imported.training;
  config.batch = 32;
  config.mode = mode.mode;
  ASSERT_EQ(config.metrics, std::vector<std::string>{"accuracy"});

  NDArray x, y, w;
  e2e::kerasBatch(x, y);
  if (const json::Object *classes = record.getObject("class_weight")) {
    for (const auto &[key, value] : *classes)
      config.classWeight[std::stoll(key.str())] = *value.getAsNumber();
  } else {
    std::vector<double> weights = numbers(*record.getArray("sample_weight"));
    w = NDArray::fromVector({static_cast<int64_t>(weights.size())}, weights,
                            DType::F32);
  }
  Trainer trainer(*imported.model, config, /*log=*/nullptr);

  std::vector<double> losses = numbers(*record.getArray("step_losses"));
  std::vector<double> accuracies = numbers(*record.getArray("step_accuracies"));
  ASSERT_EQ(losses.size(), 5u);
  double worstRel = 0, worstAbs = 0;
  for (size_t s = 0; s < losses.size(); ++s) {
    StepResult r = w.defined() ? trainer.trainOnBatch(x, y, w)
                               : trainer.trainOnBatch(x, y);
    double abs = std::abs(r.loss - losses[s]);
    worstAbs = std::max(worstAbs, abs);
    worstRel = std::max(worstRel, abs / std::abs(losses[s]));
    EXPECT_LE(abs / std::abs(losses[s]), 1e-4)
        << name << " step " << s << ": Keras " << losses[s] << ", kcc "
        << r.loss;
    ASSERT_EQ(r.metrics.size(), 1u);
    EXPECT_NEAR(r.metrics[0], accuracies[s], 1e-6) << name << " step " << s;
  }
  ASSERT_NE(trainer.executable(), nullptr);
  EXPECT_TRUE(trainer.executable()->hasSampleWeight());
  EXPECT_EQ(trainer.iterations(), 5);
  std::printf("[ keras ] %-14s %-11s loss: worst rel %.1e abs %.1e\n",
              name.c_str(), mode.name, worstRel, worstAbs);
}

INSTANTIATE_TEST_SUITE_P(
    KerasWeighting, WeightingParity,
    ::testing::Combine(::testing::Values(std::string("class_weight"),
                                         std::string("sample_weight")),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

/// The weighted step takes %sample_weight after the target; the unweighted
/// one is unchanged, and refuses weights.
TEST(Weighting, StepTakesWeightsOnlyWhenBuiltWithThem) {
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("weighting/sample_weight.keras"));
  TrainingConfig config = *imported.training;
  config.batch = 32;
  NDArray x, y;
  e2e::kerasBatch(x, y);
  NDArray ones =
      NDArray::fromVector({32}, std::vector<double>(32, 1.0), DType::F32);
  Executable plain = e2e::jitQuietly(*imported.model, config);
  EXPECT_FALSE(plain.hasSampleWeight());
  EXPECT_THROW(plain.step(x, y, ones), Error);
  double unweighted = plain.step(x, y).loss;

  config.sampleWeight = true;
  Executable weighted = e2e::jitQuietly(*imported.model, config);
  EXPECT_TRUE(weighted.hasSampleWeight());
  // All-ones weights are the unweighted loss.
  EXPECT_NEAR(weighted.step(x, y, ones).loss, unweighted, 1e-6);
  NDArray wrong =
      NDArray::fromVector({31}, std::vector<double>(31, 1.0), DType::F32);
  EXPECT_THROW(weighted.step(x, y, wrong), Error);
}

TEST(Weighting, ParseClassWeight) {
  auto ok = [](const char *text) {
    llvm::Expected<std::map<int64_t, double>> r = parseClassWeight(text);
    EXPECT_TRUE(static_cast<bool>(r)) << text;
    return r ? *r : std::map<int64_t, double>{};
  };
  auto error = [](const char *text) {
    llvm::Expected<std::map<int64_t, double>> r = parseClassWeight(text);
    return r ? std::string("ok") : llvm::toString(r.takeError());
  };
  std::map<int64_t, double> expected = {{0, 1.0}, {1, 5.0}};
  EXPECT_EQ(ok(R"({"0": 1, "1": 5})"), expected);
  EXPECT_EQ(ok("0:1,1:5"), expected);
  EXPECT_EQ(ok(" 0 : 1 , 1 : 5 "), expected);
  EXPECT_EQ(error("0:1,0:2"), "class 0 is given twice");
  EXPECT_EQ(error("a:1"), "class 'a' is not a class index (an integer >= 0)");
  EXPECT_EQ(error("-1:1"), "class '-1' is not a class index (an integer >= 0)");
  EXPECT_EQ(error("0:-2"), "the weight of class 0 must be finite and >= 0, "
                           "got -2");
  EXPECT_EQ(error("0:nan"), "the weight of class 0 must be finite and >= 0, "
                            "got nan");
  EXPECT_EQ(error("0:x"), "the weight of class 0 is not a number");
  EXPECT_EQ(error("0"), "'0' is not CLASS:WEIGHT (e.g. 0:1,1:5)");
  EXPECT_EQ(error(R"({"0": "a"})"), "the weight of class 0 is not a number");
  EXPECT_EQ(error("[1, 2]"), "'[1' is not CLASS:WEIGHT (e.g. 0:1,1:5)");
  EXPECT_EQ(error(""), "no class weights given");
}

} // namespace
