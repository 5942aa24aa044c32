//===- StatefulMetricParityTest.cpp - Keras's stateful metrics, as Keras --===//
//
// tests/fixtures/keras/metrics/stateful (written by Keras 3 itself, see
// scripts/keras-fixtures/make_stateful_metric_fixtures.py):
//
// fit.json: per case a small Dense model Keras compiled with a group of
// stateful metrics (Precision, Recall, the confusion counts, AUC in its
// forms, the *At* metrics, F1Score/FBetaScore, the IoU family, R2Score,
// RootMeanSquaredError, top-k accuracies with k != 5), as metric objects
// with arguments and instance names, then fitted 3 epochs on 80 examples
// in batches of 32 (the last partial) with 44 validation examples. kcc
// imports the .keras (its compile_config's metrics read by class), fits
// the same way, compiled and interpreted, and must log every metric, train
// and val, each epoch, within 1e-5 relative of Keras's history; a model
// of two outputs with stateful metrics on each likewise.
//
// vector/vector.json: metrics whose value is a list (the counts,
// Precision and Recall with several thresholds, F1Score/FBetaScore with
// average=None, R2Score with class_aggregation=None), 5 epochs on one
// batch, validated: the Trainer's History keeps each as a list, every
// element within 1e-4 of Keras's array, and evaluate() gives Keras's
// evaluate(return_dict=True) within 1e-5 (tests/lit/driver/
// train-list-metrics.mlir checks kcc train's CSV and kcc evaluate).
//
// formulas.json: per metric configuration, Keras's value on fixed arrays
// after one update_state and after two (the arrays split): kcc's
// statistics IR (run by the interpreter) summed, then metricResult, must
// give it within 1e-6 (edge cases included: no positives, predictions
// exactly at thresholds, classes absent from the IoU matrix).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/DataSource.h"
#include "frontend/training/HostLoss.h"
#include "frontend/training/Trainer.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &fitRecord() {
  static const json::Value root =
      e2e::readFixtureJson("metrics/stateful/fit.json");
  return *root.getAsObject();
}

const json::Object &formulaRecord() {
  static const json::Value root =
      e2e::readFixtureJson("metrics/stateful/formulas.json");
  return *root.getAsObject();
}

/// Rows [begin, end) of the fit data's array `name` ([examples, ...]).
NDArray rows(const std::string &name, int64_t begin, int64_t end, DType dtype) {
  const json::Object &data = *fitRecord().getObject("data");
  std::vector<double> values = e2e::numbers(*data.getArray(name));
  int64_t total =
      *fitRecord().getInteger("train") + *fitRecord().getInteger("validation");
  int64_t cols = static_cast<int64_t>(values.size()) / total;
  std::vector<double> part(values.begin() + begin * cols,
                           values.begin() + end * cols);
  Shape shape =
      name == "labels" ? Shape{end - begin} : Shape{end - begin, cols};
  return NDArray::fromVector(shape, part, dtype);
}

struct Mode {
  ExecMode mode;
  const char *name;
};
void PrintTo(const Mode &mode, std::ostream *os) { *os << mode.name; }

class StatefulMetricParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(StatefulMetricParity, FitHistoryReproducesKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &c = *fitRecord().getObject("cases")->getObject(name);
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("metrics/stateful/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  int64_t batch = *fitRecord().getInteger("batch");
  int64_t train = *fitRecord().getInteger("train");
  int64_t val = *fitRecord().getInteger("validation");
  config.batch = batch;
  config.mode = mode.mode;

  std::string target = c.getString("target")->str();
  DType ydtype = target == "labels" ? DType::I32 : DType::F32;
  ArrayDataSource trainData(
      ExampleArray::fromNDArray(rows("x", 0, train, DType::F32), "x"),
      ExampleArray::fromNDArray(rows(target, 0, train, ydtype), "y"), batch,
      DType::F32, ydtype);
  ArrayDataSource valData(
      ExampleArray::fromNDArray(rows("x", train, train + val, DType::F32), "x"),
      ExampleArray::fromNDArray(rows(target, train, train + val, ydtype), "y"),
      batch, DType::F32, ydtype);

  Trainer trainer(*imported.model, config, /*log=*/nullptr);
  FitOptions fit;
  fit.epochs = *fitRecord().getInteger("epochs");
  fit.verbose = 0;
  History history = trainer.fit(trainData, fit, &valData);
  ASSERT_EQ(history.epochs.size(), static_cast<size_t>(fit.epochs));

  const json::Object &keras = *c.getObject("history");
  double worst = 0;
  std::string worstKey;
  for (const auto &[key, values] : keras) {
    std::vector<double> expected = e2e::numbers(*values.getAsArray());
    for (size_t e = 0; e < expected.size(); ++e) {
      const Logs &logs = history.epochs[e].values;
      auto it = logs.find(key.str());
      ASSERT_NE(it, logs.end()) << name << ": kcc logs no " << key.str();
      double err = std::abs(it->second - expected[e]) /
                   std::max(1.0, std::abs(expected[e]));
      if (err > worst)
        worst = err, worstKey = key.str();
      EXPECT_LE(err, 1e-5) << name << " epoch " << e << " " << key.str()
                           << ": Keras " << expected[e] << ", kcc "
                           << it->second;
    }
  }
  // kcc logs nothing Keras does not.
  for (const auto &[key, value] : history.epochs[0].values)
    EXPECT_TRUE(keras.get(key) != nullptr) << "Keras logs no " << key;
  std::printf("[ keras ] %-12s %-11s %zu logs x %lld epochs, worst rel %.1e "
              "(%s)\n",
              name.c_str(), mode.name, keras.size(),
              static_cast<long long>(fit.epochs), worst, worstKey.c_str());
}

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const auto &[key, value] : *fitRecord().getObject("cases"))
    names.push_back(key.str());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    KerasStatefulMetrics, StatefulMetricParity,
    ::testing::Combine(::testing::ValuesIn(caseNames()),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

class StatefulMetricMultiOutput : public ::testing::TestWithParam<Mode> {};

// Two outputs, each with its own stateful metrics: logged as
// <output>_<metric>, train and val, as Keras logs them.
TEST_P(StatefulMetricMultiOutput, FitHistoryReproducesKeras) {
  const Mode &mode = GetParam();
  const json::Object &c = *fitRecord().getObject("multi");
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("metrics/stateful/multi.keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  ASSERT_EQ(config.outputs.size(), 2u);
  int64_t batch = *fitRecord().getInteger("batch");
  int64_t train = *fitRecord().getInteger("train");
  int64_t val = *fitRecord().getInteger("validation");
  config.batch = batch;
  config.mode = mode.mode;
  auto source = [&](int64_t begin, int64_t end) {
    std::vector<ExampleArray> targets;
    std::vector<DType> types;
    for (const json::Value &t : *c.getArray("targets")) {
      std::string name = t.getAsString()->str();
      DType dtype = name == "labels" ? DType::I32 : DType::F32;
      targets.push_back(
          ExampleArray::fromNDArray(rows(name, begin, end, dtype), name));
      types.push_back(dtype);
    }
    return std::make_unique<ArrayDataSource>(
        std::vector<ExampleArray>{
            ExampleArray::fromNDArray(rows("x", begin, end, DType::F32), "x")},
        std::move(targets), batch, std::vector<DType>{DType::F32}, types);
  };
  std::unique_ptr<ArrayDataSource> trainData = source(0, train);
  std::unique_ptr<ArrayDataSource> valData = source(train, train + val);
  Trainer trainer(*imported.model, config, /*log=*/nullptr);
  FitOptions fit;
  fit.epochs = *fitRecord().getInteger("epochs");
  fit.verbose = 0;
  History history = trainer.fit(*trainData, fit, valData.get());
  const json::Object &keras = *c.getObject("history");
  double worst = 0;
  for (const auto &[key, values] : keras) {
    std::vector<double> expected = e2e::numbers(*values.getAsArray());
    for (size_t e = 0; e < expected.size(); ++e) {
      const Logs &logs = history.epochs[e].values;
      auto it = logs.find(key.str());
      ASSERT_NE(it, logs.end()) << "kcc logs no " << key.str();
      double err = std::abs(it->second - expected[e]) /
                   std::max(1.0, std::abs(expected[e]));
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-5) << "epoch " << e << " " << key.str() << ": Keras "
                           << expected[e] << ", kcc " << it->second;
    }
  }
  for (const auto &[key, value] : history.epochs[0].values)
    EXPECT_TRUE(keras.get(key) != nullptr) << "Keras logs no " << key;
  std::printf("[ keras ] %-12s %-11s %zu logs x %lld epochs, worst rel %.1e\n",
              "multi", mode.name, keras.size(),
              static_cast<long long>(fit.epochs), worst);
}

INSTANTIATE_TEST_SUITE_P(
    KerasStatefulMetrics, StatefulMetricMultiOutput,
    ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                      Mode{ExecMode::Interpreted, "interpreted"}),
    [](const auto &info) { return std::string(info.param.name); });

const json::Object &vectorRecord() {
  static const json::Value root =
      e2e::readFixtureJson("metrics/stateful/vector/vector.json");
  return *root.getAsObject();
}

/// The largest difference between a log value and Keras's (a number, or a
/// list for an array); fails when one is a list and the other is not.
double listDifference(const std::string &what, const LogValue &kcc,
                      const json::Value &keras) {
  const json::Array *list = keras.getAsArray();
  EXPECT_EQ(kcc.isList(), list != nullptr)
      << what << ": Keras logs " << (list ? "an array" : "a number") << ", kcc "
      << kcc;
  std::vector<double> expected =
      list ? e2e::numbers(*list) : std::vector<double>{*keras.getAsNumber()};
  if (kcc.values().size() != expected.size()) {
    ADD_FAILURE() << what << ": Keras logs " << expected.size()
                  << " values, kcc " << kcc;
    return INFINITY;
  }
  double worst = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    worst = std::max(worst, std::abs(kcc.values()[i] - expected[i]));
  return worst;
}

class ListMetricParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(ListMetricParity, HistoryAndEvaluateReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &c = *vectorRecord().getObject("cases")->getObject(name);
  std::string dir = e2e::kerasFixture("metrics/stateful/vector/");
  keras::ImportedModel imported =
      keras::importKerasArchive(dir + name + ".keras");
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  int64_t train = *vectorRecord().getInteger("train");
  int64_t val = *vectorRecord().getInteger("validation");
  config.batch = train;
  config.mode = mode.mode;
  auto source = [&](const std::string &part, int64_t batch) {
    std::map<std::string, NDArray> arrays =
        readNpz(dir + name + "_" + part + ".npz");
    return std::make_unique<ArrayDataSource>(
        ExampleArray::fromNDArray(arrays.at("x"), "x"),
        ExampleArray::fromNDArray(arrays.at("y"), "y"), batch, DType::F32,
        DType::F32);
  };
  std::unique_ptr<ArrayDataSource> trainData = source("train", train);
  std::unique_ptr<ArrayDataSource> valData = source("val", val);

  Trainer trainer(*imported.model, config, /*log=*/nullptr);
  // Keras evaluated the saved (initial) weights.
  Logs evaluated = trainer.evaluate(*valData);
  double worstEvaluate = 0;
  for (const auto &[key, value] : *c.getObject("evaluate")) {
    auto it = evaluated.find(key.str());
    ASSERT_NE(it, evaluated.end()) << "evaluate logs no " << key.str();
    double d = listDifference("evaluate " + key.str(), it->second, value);
    worstEvaluate = std::max(worstEvaluate, d);
    EXPECT_LE(d, 1e-5) << "evaluate " << key.str() << ": kcc " << it->second;
  }
  EXPECT_EQ(evaluated.size(), c.getObject("evaluate")->size());

  FitOptions fit;
  fit.epochs = *vectorRecord().getInteger("epochs");
  fit.verbose = 0;
  fit.shuffle = false;
  History history = trainer.fit(*trainData, fit, valData.get());
  const json::Object &keras = *c.getObject("history");
  ASSERT_EQ(history.history.size(), keras.size());
  double worst = 0;
  size_t lists = 0;
  for (const auto &[key, values] : keras) {
    const std::vector<LogValue> &logged = history.history.at(key.str());
    const json::Array &expected = *values.getAsArray();
    ASSERT_EQ(logged.size(), expected.size()) << key.str();
    for (size_t e = 0; e < expected.size(); ++e) {
      std::string what = "epoch " + std::to_string(e) + " " + key.str();
      double d = listDifference(what, logged[e], expected[e]);
      lists += logged[e].isList();
      worst = std::max(worst, d);
      EXPECT_LE(d, 1e-4) << what << ": kcc " << logged[e];
    }
  }
  EXPECT_GT(lists, 0u);
  std::printf("[ keras ] %-10s %-11s %zu logs x %lld epochs (%zu lists), "
              "worst %.1e; evaluate worst %.1e\n",
              name.c_str(), mode.name, keras.size(),
              static_cast<long long>(fit.epochs), lists, worst, worstEvaluate);
}

INSTANTIATE_TEST_SUITE_P(
    KerasListMetrics, ListMetricParity,
    ::testing::Combine(::testing::Values("thresholds", "classes", "columns"),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

/// formulas.json's array `name`, rows [begin, end).
NDArray formulaArray(const std::string &name, int64_t begin, int64_t end,
                     DType dtype) {
  const json::Object &a = *formulaRecord().getObject("arrays")->getObject(name);
  std::vector<double> shape = e2e::numbers(*a.getArray("shape"));
  std::vector<double> values = e2e::numbers(*a.getArray("values"));
  int64_t cols = shape.size() > 1 ? static_cast<int64_t>(shape[1]) : 1;
  std::vector<double> part(values.begin() + begin * cols,
                           values.begin() + end * cols);
  Shape s = shape.size() > 1 ? Shape{end - begin, cols} : Shape{end - begin};
  return NDArray::fromVector(s, part, dtype);
}

TEST(StatefulMetricFormulas, MatchKerasOnFixedArrays) {
  const json::Object &metrics = *formulaRecord().getObject("metrics");
  ASSERT_GT(metrics.size(), 30u);
  for (const auto &[key, value] : metrics) {
    const json::Object &m = *value.getAsObject();
    std::string name = key.str();
    llvm::StringRef cls = *m.getString("class_name");
    llvm::Expected<std::string> text =
        metricFromKeras(cls, m.getObject("config"));
    ASSERT_TRUE(bool(text)) << name << ": " << llvm::toString(text.takeError());
    std::string yt = m.getString("y_true")->str();
    LossKind loss = yt == "classes" ? LossKind::SparseCategoricalCrossentropy
                                    : LossKind::MeanSquaredError;
    llvm::Expected<MetricConfig> config = MetricConfig::parse(*text, loss);
    ASSERT_TRUE(bool(config))
        << name << " (" << *text << "): " << llvm::toString(config.takeError());
    DType tdtype = yt == "classes" ? DType::I32 : DType::F32;
    std::string yp = m.getString("y_pred")->str();
    HostMetricStatistics stats(*config, loss);
    auto value = [&](int64_t begin, int64_t end) {
      return stats(formulaArray(yp, begin, end, DType::F32),
                   formulaArray(yt, begin, end, tdtype));
    };
    // One update of all 12 rows, then two of 5 and 7.
    std::vector<double> all = value(0, 12);
    std::vector<double> first = value(0, 5), second = value(5, 12);
    double once, twice;
    if (config->stateful()) {
      for (size_t i = 0; i < first.size(); ++i)
        first[i] += second[i];
      once = metricResult(*config, all);
      twice = metricResult(*config, first);
    } else {
      // A mean metric: the batch means weighed by their rows.
      once = all[0];
      twice = (first[0] * 5 + second[0] * 7) / 12;
    }
    double kerasOnce = *m.getNumber("one_update");
    double kerasTwice = *m.getNumber("two_updates");
    EXPECT_NEAR(once, kerasOnce, 1e-6 * std::max(1.0, std::abs(kerasOnce)))
        << name << " (" << *text << "), one update";
    EXPECT_NEAR(twice, kerasTwice, 1e-6 * std::max(1.0, std::abs(kerasTwice)))
        << name << " (" << *text << "), two updates";
  }
}

// vector.json's "formulas": the list metrics on formulas.json's arrays
// (predictions exactly at thresholds, no positives, adjusted R2 per
// column), every element within 1e-6 of Keras's array.
TEST(StatefulMetricFormulas, ListsMatchKerasOnFixedArrays) {
  const json::Object &metrics = *vectorRecord().getObject("formulas");
  ASSERT_GE(metrics.size(), 10u);
  for (const auto &[key, value] : metrics) {
    const json::Object &m = *value.getAsObject();
    std::string name = key.str();
    llvm::StringRef cls = *m.getString("class_name");
    llvm::Expected<std::string> text =
        metricFromKeras(cls, m.getObject("config"));
    ASSERT_TRUE(bool(text)) << name << ": " << llvm::toString(text.takeError());
    llvm::Expected<MetricConfig> config =
        MetricConfig::parse(*text, LossKind::MeanSquaredError);
    ASSERT_TRUE(bool(config))
        << name << " (" << *text << "): " << llvm::toString(config.takeError());
    EXPECT_TRUE(config->listResult()) << name << " (" << *text << ")";
    HostMetricStatistics stats(*config, LossKind::MeanSquaredError);
    std::string yt = m.getString("y_true")->str();
    std::string yp = m.getString("y_pred")->str();
    auto statistics = [&](int64_t begin, int64_t end) {
      return stats(formulaArray(yp, begin, end, DType::F32),
                   formulaArray(yt, begin, end, DType::F32));
    };
    std::vector<double> all = statistics(0, 12);
    std::vector<double> first = statistics(0, 5), second = statistics(5, 12);
    for (size_t i = 0; i < first.size(); ++i)
      first[i] += second[i];
    for (auto [values, which] :
         {std::pair{metricValues(*config, all), "one_update"},
          std::pair{metricValues(*config, first), "two_updates"}}) {
      std::vector<double> keras = e2e::numbers(*m.getArray(which));
      ASSERT_EQ(values.size(), keras.size()) << name << " " << which;
      for (size_t i = 0; i < keras.size(); ++i)
        EXPECT_NEAR(values[i], keras[i],
                    1e-6 * std::max(1.0, std::abs(keras[i])))
            << name << " (" << *text << "), " << which << " element " << i;
    }
  }
}

} // namespace
