//===- OptimizerParityTest.cpp - kcc's optimizers reproduce Keras's -------===//
//
// For every optimizer, weight-decay, clipping and learning-rate-schedule
// case in tests/fixtures/keras/optimizers (written by Keras 3 itself, see
// scripts/keras-fixtures/make_optimizer_fixtures.py), the optimizer comes
// from the .keras archive's compile_config, as `kcc train` reads it, and 5
// steps on the fixed batch, compiled and interpreted, must reproduce the
// losses Keras recorded within 1e-4 relative, end at Keras's weights, and
// end with Keras's optimizer variables (in Keras's order, through
// kerasStateOrder).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "passes/Optimizers.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

using e2e::numbers;

/// tests/fixtures/keras/optimizers/`name`.
std::string fixture(const std::string &name) {
  return e2e::kerasFixture("optimizers/" + name);
}

const json::Object &cases() {
  static const json::Value root =
      e2e::readFixtureJson("optimizers/optimizers.json");
  return *root.getAsObject()->getObject("cases");
}

/// The first elements and the sum of `a` against a Keras checksum entry;
/// returns the largest error relative to `scale` + |value|.
double compareChecksum(const NDArray &a, const json::Object &expected,
                       double tolerance, const std::string &what) {
  std::vector<double> first = numbers(*expected.getArray("first"));
  double worst = 0;
  for (size_t i = 0; i < first.size(); ++i) {
    double err = std::abs(a.at(i) - first[i]);
    worst = std::max(worst, err / (1e-3 + std::abs(first[i])));
    EXPECT_LE(err, tolerance * (1e-3 + std::abs(first[i])))
        << what << "[" << i << "]: Keras " << first[i] << ", kcc " << a.at(i);
  }
  double sum = 0;
  for (double v : a.toVector())
    sum += v;
  double keras = *expected.getNumber("sum");
  double n = static_cast<double>(a.numel());
  double err = std::abs(sum - keras);
  EXPECT_LE(err, tolerance * (1e-3 * n + std::abs(keras)))
      << what << " sum: Keras " << keras << ", kcc " << sum;
  return worst;
}

struct Mode {
  ExecMode mode;
  const char *name;
};

class OptimizerParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(OptimizerParity, FiveStepsReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &record = *cases().getObject(name);
  keras::ImportedModel imported =
      keras::importKerasArchive(fixture(name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value());
  ASSERT_EQ(imported.trainingError, "");
  TrainingConfig config = *imported.training;
  config.batch = 32;
  config.mode = mode.mode;

  NDArray x, y;
  e2e::kerasBatch(x, y);
  Executable exe = e2e::jitQuietly(*imported.model, config);

  std::vector<double> expected = numbers(*record.getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  e2e::LossErrors worst = e2e::expectKerasLosses(exe, x, y, expected, name);
  EXPECT_EQ(exe.iterations(), 5);
  if (config.optimizer.schedule) {
    // Keras forbids setting the rate a schedule drives; re-applying the
    // rate the executable reports (the schedule's initial one) is a no-op.
    EXPECT_THROW(exe.setLearningRate(0.5), Error);
    exe.setLearningRate(exe.learningRate());
  }

  std::vector<NDArray> weights = exe.getWeights();
  const json::Array &finals = *record.getArray("final_weights");
  ASSERT_EQ(finals.size(), weights.size());
  double worstWeight = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    const json::Object &w = *finals[k].getAsObject();
    worstWeight = std::max(
        worstWeight, compareChecksum(weights[k], w, 1e-3,
                                     name + " " + w.getString("layer")->str() +
                                         "/" + w.getString("name")->str()));
  }

  // Keras's optimizer variables: iteration, learning_rate (without a
  // schedule), then the slots in kerasStateOrder's order.
  std::vector<const json::Object *> slots;
  for (const json::Value &v : *record.getArray("final_optimizer_variables")) {
    const json::Object &o = *v.getAsObject();
    llvm::StringRef path = *o.getString("path");
    if (path.ends_with("/iteration")) {
      EXPECT_EQ(*o.getNumber("sum"), 5.0);
      continue;
    }
    if (path.ends_with("/learning_rate"))
      continue;
    slots.push_back(&o);
  }
  std::vector<NDArray> state = exe.getOptimizerState();
  unsigned trainable = weights.size();
  std::vector<unsigned> order = kerasStateOrder(config.optimizer, trainable);
  ASSERT_EQ(slots.size(), state.size());
  ASSERT_EQ(order.size(), state.size());
  double worstState = 0;
  for (size_t j = 0; j < slots.size(); ++j)
    worstState = std::max(
        worstState,
        compareChecksum(state[order[j]], *slots[j], 1e-2,
                        name + " " + slots[j]->getString("path")->str()));

  std::printf("[ keras ] %-30s %-11s loss: worst rel %.1e abs %.1e; "
              "weights %.1e, state %.1e (relative)\n",
              name.c_str(), mode.name, worst.relative, worst.absolute,
              worstWeight, worstState);
}

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const auto &kv : cases())
    names.push_back(kv.first.str());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    KerasOptimizers, OptimizerParity,
    ::testing::Combine(::testing::ValuesIn(caseNames()),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

} // namespace
