//===- MetricParityTest.cpp - top-k, mae and mse metrics as Keras ---------===//
//
// tests/fixtures/keras/metrics (written by Keras 3 itself, see
// scripts/keras-fixtures/make_metric_fixtures.py): the 784-8-10 model with
// Adam, compiled with the top-k, mae and mse metrics (as strings and as a
// metric object in the compile config). kcc, compiled and interpreted, must
// reproduce each of 5 train_on_batch steps' logs (the metrics computed in
// the step) and, after them, evaluate()'s logs in batches of 10 (computed on
// the host from the predictions, the partial last batch weighed by its
// size) within 1e-5.
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

const json::Object &cases() {
  static const json::Value root = e2e::readFixtureJson("metrics/metrics.json");
  return *root.getAsObject()->getObject("cases");
}

struct Mode {
  ExecMode mode;
  const char *name;
};

/// Every key of Keras's `logs` is in kcc's with the same value; kcc logs
/// nothing Keras does not.
double expectLogs(const json::Object &keras, const Logs &kcc,
                  const std::string &where) {
  double worst = 0;
  EXPECT_EQ(keras.size(), kcc.size()) << where;
  for (const auto &[key, value] : keras) {
    auto it = kcc.find(key.str());
    if (it == kcc.end()) {
      ADD_FAILURE() << where << ": kcc logs no '" << key.str() << "'";
      continue;
    }
    double expected = *value.getAsNumber();
    double err = std::abs(it->second - expected);
    worst = std::max(worst, err);
    EXPECT_LE(err, 1e-5) << where << " " << key.str() << ": Keras "
                         << expected << ", kcc " << it->second;
  }
  return worst;
}

class MetricParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(MetricParity, StepsAndEvaluateReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &record = *cases().getObject(name);
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("metrics/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value());
  TrainingConfig config = *imported.training;
  config.batch = 32;
  config.mode = mode.mode;

  NDArray x, y;
  e2e::kerasBatch(x, y);
  if (config.loss.kind == LossKind::CategoricalCrossentropy) {
    std::vector<double> labels = y.toVector(), oneHot(labels.size() * 10, 0);
    for (size_t i = 0; i < labels.size(); ++i)
      oneHot[i * 10 + static_cast<size_t>(labels[i])] = 1;
    y = NDArray::fromVector({static_cast<int64_t>(labels.size()), 10}, oneHot,
                            DType::F32);
  }
  Trainer trainer(*imported.model, config, /*log=*/nullptr);

  const json::Array &steps = *record.getArray("steps");
  ASSERT_EQ(steps.size(), 5u);
  double worst = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    StepResult r = trainer.trainOnBatch(x, y);
    const std::vector<std::string> &names =
        trainer.executable()->metricNames();
    ASSERT_EQ(names.size(), r.metrics.size());
    Logs logs{{"loss", r.loss}};
    for (size_t m = 0; m < names.size(); ++m)
      logs[names[m]] = r.metrics[m];
    worst = std::max(worst, expectLogs(*steps[s].getAsObject(), logs,
                                       name + " step " + std::to_string(s)));
  }
  Logs evaluated = trainer.evaluate(Dataset{x, y}, /*batchSize=*/10);
  double worstEval =
      expectLogs(*record.getObject("evaluate"), evaluated, name + " evaluate");
  std::printf("[ keras ] %-11s %-11s worst |kcc - keras|: steps %.1e, "
              "evaluate %.1e\n",
              name.c_str(), mode.name, worst, worstEval);
}

INSTANTIATE_TEST_SUITE_P(
    KerasMetrics, MetricParity,
    ::testing::Combine(::testing::Values(std::string("sparse"),
                                         std::string("categorical")),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

} // namespace
