//===- MetricParityTest.cpp - Keras's metrics and an mse autoencoder ------===//
//
// tests/fixtures/keras/metrics (written by Keras 3 itself, see
// scripts/keras-fixtures/make_metric_fixtures.py and
// make_accuracy_fixtures.py): models with Adam, compiled with the top-k,
// mae, mse, categorical_accuracy and binary_accuracy metrics (as strings
// and as a metric object in the compile config), and an autoencoder with
// loss "mse" whose target is its input. kcc, compiled and interpreted, must
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
#include <ostream>

using namespace kcc;
namespace json = llvm::json;

namespace {

/// The "cases" of metrics/`file`.
const json::Object &cases(const std::string &file) {
  static const json::Value metrics =
      e2e::readFixtureJson("metrics/metrics.json");
  static const json::Value accuracy =
      e2e::readFixtureJson("metrics/accuracy.json");
  const json::Value &root = file == "metrics.json" ? metrics : accuracy;
  return *root.getAsObject()->getObject("cases");
}

/// What a case trained toward on the batch of images x and labels y.
enum class Target {
  Labels,   ///< y, class indices
  OneHot,   ///< y one-hot, [32, 10]
  Upper,    ///< y >= 5 as 0/1, [32, 1]
  Identity, ///< x itself (an autoencoder)
};

/// A case of a record file: metrics/`file`'s cases.`name`, trained on the
/// model metrics/`name`.keras toward `target`.
struct Case {
  const char *file, *name;
  Target target;
};

/// Names a case in gtest's messages (not as its bytes).
void PrintTo(const Case &fixture, std::ostream *os) {
  *os << fixture.file << ":" << fixture.name;
}

/// The target `target` names for images `x` and class indices `y`.
NDArray targetOf(Target target, const NDArray &x, const NDArray &y) {
  std::vector<double> labels = y.toVector();
  int64_t rows = static_cast<int64_t>(labels.size());
  switch (target) {
  case Target::Labels:
    return y;
  case Target::OneHot: {
    std::vector<double> oneHot(labels.size() * 10, 0);
    for (size_t i = 0; i < labels.size(); ++i)
      oneHot[i * 10 + static_cast<size_t>(labels[i])] = 1;
    return NDArray::fromVector({rows, 10}, oneHot, DType::F32);
  }
  case Target::Upper: {
    std::vector<double> upper;
    for (double label : labels)
      upper.push_back(label >= 5 ? 1 : 0);
    return NDArray::fromVector({rows, 1}, upper, DType::F32);
  }
  case Target::Identity:
    return x;
  }
  return y;
}

struct Mode {
  ExecMode mode;
  const char *name;
};

void PrintTo(const Mode &mode, std::ostream *os) { *os << mode.name; }

/// The worst errors of kcc's logs against Keras's.
struct LogErrors {
  double absolute = 0;
  /// Over |Keras's value| (the absolute error where that is 0).
  double relative = 0;

  void merge(const LogErrors &o) {
    absolute = std::max(absolute, o.absolute);
    relative = std::max(relative, o.relative);
  }
};

/// Every key of Keras's `logs` is in kcc's with the same value, within
/// 1e-5 absolute and 1e-4 relative; kcc logs nothing Keras does not.
LogErrors expectLogs(const json::Object &keras, const Logs &kcc,
                     const std::string &where) {
  LogErrors worst;
  EXPECT_EQ(keras.size(), kcc.size()) << where;
  for (const auto &[key, value] : keras) {
    auto it = kcc.find(key.str());
    if (it == kcc.end()) {
      ADD_FAILURE() << where << ": kcc logs no '" << key.str() << "'";
      continue;
    }
    double expected = *value.getAsNumber();
    double err = std::abs(it->second - expected);
    double rel = expected == 0 ? err : err / std::abs(expected);
    worst.merge({err, rel});
    EXPECT_LE(err, 1e-5) << where << " " << key.str() << ": Keras " << expected
                         << ", kcc " << it->second;
    EXPECT_LE(rel, 1e-4) << where << " " << key.str() << ": Keras " << expected
                         << ", kcc " << it->second;
  }
  return worst;
}

class MetricParity : public ::testing::TestWithParam<std::tuple<Case, Mode>> {};

TEST_P(MetricParity, StepsAndEvaluateReproduceKeras) {
  const auto &[fixture, mode] = GetParam();
  const std::string name = fixture.name;
  const json::Object *found = cases(fixture.file).getObject(name);
  ASSERT_NE(found, nullptr) << fixture.file << " has no case " << name;
  const json::Object &record = *found;
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("metrics/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value());
  TrainingConfig config = *imported.training;
  config.batch = 32;
  config.mode = mode.mode;

  NDArray x, labels;
  e2e::kerasBatch(x, labels);
  NDArray y = targetOf(fixture.target, x, labels);
  Trainer trainer(*imported.model, config, /*log=*/nullptr);

  const json::Array &steps = *record.getArray("steps");
  ASSERT_EQ(steps.size(), 5u);
  LogErrors worst;
  for (size_t s = 0; s < steps.size(); ++s) {
    StepResult r = trainer.trainOnBatch(x, y);
    const std::vector<std::string> &names = trainer.executable()->metricNames();
    ASSERT_EQ(names.size(), r.metrics.size());
    Logs logs{{"loss", r.loss}};
    for (size_t m = 0; m < names.size(); ++m)
      logs[names[m]] = r.metrics[m];
    worst.merge(expectLogs(*steps[s].getAsObject(), logs,
                           name + " step " + std::to_string(s)));
  }
  Logs evaluated = trainer.evaluate(Dataset{x, y}, /*batchSize=*/10);
  LogErrors worstEval =
      expectLogs(*record.getObject("evaluate"), evaluated, name + " evaluate");
  std::printf("[ keras ] %-20s %-11s worst abs / rel: steps %.1e / %.1e, "
              "evaluate %.1e / %.1e\n",
              name.c_str(), mode.name, worst.absolute, worst.relative,
              worstEval.absolute, worstEval.relative);
}

INSTANTIATE_TEST_SUITE_P(
    KerasMetrics, MetricParity,
    ::testing::Combine(
        ::testing::Values(
            Case{"metrics.json", "sparse", Target::Labels},
            Case{"metrics.json", "categorical", Target::OneHot},
            Case{"accuracy.json", "autoencoder", Target::Identity},
            Case{"accuracy.json", "categorical_accuracy", Target::OneHot},
            Case{"accuracy.json", "binary_accuracy", Target::Upper}),
        ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                          Mode{ExecMode::Interpreted, "interpreted"})),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).name) + "_" +
             std::get<1>(info.param).name;
    });

} // namespace
