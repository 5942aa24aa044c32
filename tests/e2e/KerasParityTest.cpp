//===- KerasParityTest.cpp - kcc's step reproduces Keras's ----------------===//
//
// From Keras's own initial weights (the .keras fixtures) and on the batch
// Keras trained on (the first 32 Fashion-MNIST training images, the same
// batch at every step), kcc's compiled training step must reproduce the
// per-step losses Keras computed (training.json: the loss of each
// train_on_batch call, not fit()'s running mean) within 1e-4 relative over
// 5 Adam steps, and end at Keras's weights.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

using e2e::kerasFixture;
using e2e::numbers;

class KerasParity : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasParity, CompiledStepReproducesKerasLosses) {
  const std::string name = GetParam();
  json::Value training = e2e::readFixtureJson("training.json");
  const json::Object &root = *training.getAsObject();
  const json::Object &record = *root.getObject(name);
  const json::Object &batchInfo = *root.getObject("batch");
  ASSERT_EQ(*root.getInteger("steps"), 5);
  ASSERT_TRUE(*root.getBoolean("same_batch_each_step"));

  keras::ImportedModel imported =
      keras::importKerasArchive(kerasFixture(name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);

  // The batch Keras trained on: training images 0..31, labels checked.
  NDArray x, y;
  e2e::kerasBatch(x, y);
  std::vector<double> labels = numbers(*batchInfo.getArray("labels"));
  ASSERT_EQ(labels, y.toVector());

  ASSERT_EQ(*record.getObject("optimizer")->getString("name"), "adam");
  Executable exe = e2e::jitQuietly(
      *imported.model, e2e::kerasAdamConfig(record, ExecMode::Compiled));

  std::vector<double> expected = numbers(*record.getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  double worst = e2e::expectKerasLosses(exe, x, y, expected, name).relative;

  // And the weights Keras ended with (sum and first elements per variable).
  std::vector<NDArray> weights = exe.getWeights();
  const json::Array &finals = *record.getArray("final_weights");
  ASSERT_EQ(finals.size(), weights.size());
  double worstWeight = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    const json::Object &w = *finals[k].getAsObject();
    std::vector<double> first = numbers(*w.getArray("first"));
    for (size_t i = 0; i < first.size(); ++i) {
      double err = std::abs(weights[k].at(i) - first[i]);
      worstWeight = std::max(worstWeight, err);
      EXPECT_LE(err, 1e-5 + 1e-4 * std::abs(first[i]))
          << name << " " << w.getString("layer")->str() << "/"
          << w.getString("name")->str() << "[" << i << "]";
    }
  }
  std::printf("[ keras ] %s: 5 Adam steps, worst loss relative error %.2e, "
              "worst weight error %.2e\n",
              name.c_str(), worst, worstWeight);
}

INSTANTIATE_TEST_SUITE_P(KerasFixtures, KerasParity,
                         ::testing::Values("mlp", "cnn"),
                         [](const auto &info) { return info.param; });

} // namespace
