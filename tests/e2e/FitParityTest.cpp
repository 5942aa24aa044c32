//===- FitParityTest.cpp - fit() and evaluate() of several IO as Keras ----===//
//
// tests/fixtures/keras/multi/fit* (written by Keras 3 itself, see
// scripts/keras-fixtures/make_fit_fixtures.py): Keras's model.fit History
// and model.evaluate of the two-head and the two-input model, on .npz
// archives keyed by layer name, with shuffle off. From the same initial
// weights, the Trainer's fit over the same batches (two full and a partial
// one per epoch), compiled and interpreted, must log every value Keras
// logged, under Keras's names, within 1e-4: the total and per-output
// losses, the metrics, and the validation's (weighted by the validation
// data's sample_weight, as Keras weighs validation_data=(x, y, w)); and
// evaluate() must equal Keras's evaluate(x, y, sample_weight).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &fitJson() {
  static const json::Value root = e2e::readFixtureJson("multi/fit.json");
  return *root.getAsObject();
}

/// A fixture's model (its initial weights) and its compile config.
struct Loaded {
  keras::ImportedModel imported;
  TrainingConfig config;
};

Loaded load(const std::string &model, ExecMode mode, int64_t batch) {
  Loaded l{
      keras::importKerasArchive(e2e::kerasFixture("multi/" + model + ".keras")),
      {}};
  EXPECT_TRUE(l.imported.weightsLoaded);
  EXPECT_TRUE(l.imported.training.has_value()) << l.imported.trainingError;
  l.config = *l.imported.training;
  l.config.batch = batch;
  l.config.mode = mode;
  return l;
}

Examples examples(Loaded &l, const std::string &file) {
  return loadExamples(e2e::kerasFixture("multi/" + file),
                      dataSpecOf(*l.imported.model, l.config), nullptr);
}

/// Every value of Keras's record against kcc's logs, by name; returns the
/// worst relative error (over max(1, |value|)).
double compareLogs(const Logs &kcc, const json::Object &keras, size_t epoch,
                   const std::string &what) {
  double worst = 0;
  EXPECT_EQ(kcc.size(), keras.size()) << what;
  for (const auto &[key, value] : keras) {
    double want = epoch == SIZE_MAX
                      ? *value.getAsNumber()
                      : *(*value.getAsArray())[epoch].getAsNumber();
    auto it = kcc.find(key.str());
    if (it == kcc.end()) {
      ADD_FAILURE() << what << ": kcc logs no " << key.str();
      continue;
    }
    double err = std::abs(it->second - want) / std::max(1.0, std::abs(want));
    worst = std::max(worst, err);
    EXPECT_LE(err, 1e-4) << what << " " << key.str() << ": Keras " << want
                         << ", kcc " << it->second;
  }
  return worst;
}

struct Run {
  const char *record, *model, *train, *validation;
  double validationSplit;
};

class FitParity : public ::testing::TestWithParam<std::tuple<Run, ExecMode>> {};

TEST_P(FitParity, HistoryMatchesKeras) {
  const auto &[run, mode] = GetParam();
  const json::Object &fit = fitJson();
  int64_t batch = *fit.getInteger("batch_size");
  Loaded l = load(run.model, mode, batch);
  DataSpec spec = dataSpecOf(*l.imported.model, l.config);
  Examples train = examples(l, run.train), validation;
  if (run.validation) {
    validation = examples(l, run.validation);
  } else {
    // Keras's validation_split: the last fraction, before shuffling.
    int64_t splitAt = static_cast<int64_t>(
        std::floor(train.size() * (1.0 - run.validationSplit)));
    validation = train.slice(splitAt, train.size());
    train = train.slice(0, splitAt);
  }
  std::unique_ptr<ArrayDataSource> trainData = dataSourceOf(train, spec, batch);
  std::unique_ptr<ArrayDataSource> valData =
      dataSourceOf(validation, spec, batch);
  Trainer trainer(*l.imported.model, l.config, /*log=*/nullptr);
  FitOptions options;
  options.epochs = *fit.getInteger("epochs");
  options.batchSize = batch;
  options.shuffle = false;
  options.verbose = 0;
  History h = trainer.fit(*trainData, options, valData.get());
  const json::Object &keras = *fit.getObject(run.record);
  ASSERT_EQ(h.epochs.size(), static_cast<size_t>(options.epochs));
  double worst = 0;
  for (size_t e = 0; e < h.epochs.size(); ++e)
    worst = std::max(worst, compareLogs(h.epochs[e].values, keras, e,
                                        std::string(run.record) + " epoch " +
                                            std::to_string(e + 1)));
  EXPECT_EQ(h.epochs[0].steps, 3) << "two full batches and a partial one";
  std::printf("[ keras ] fit %-15s %-11s %zu logs x %zu epochs: worst rel "
              "%.1e\n",
              run.record,
              mode == ExecMode::Compiled ? "compiled" : "interpreted",
              keras.size(), h.epochs.size(), worst);
}

INSTANTIATE_TEST_SUITE_P(
    KerasFit, FitParity,
    ::testing::Combine(
        ::testing::Values(Run{"multi_plain", "multi_output",
                              "fit_multi_train.npz", "fit_multi_val.npz", 0},
                          Run{"multi_weighted", "multi_output",
                              "fit_multi_all.npz", nullptr, 0.25},
                          Run{"two_inputs", "two_inputs_adam",
                              "fit_two_train.npz", "fit_two_val.npz", 0}),
        ::testing::Values(ExecMode::Compiled, ExecMode::Interpreted)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param).record) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// evaluate() from the initial weights, weighted by the archive's
/// sample_weight: Keras's model.evaluate(x, y, sample_weight=w).
TEST(FitParity, EvaluateMatchesKeras) {
  const json::Object &fit = fitJson();
  int64_t batch = *fit.getInteger("batch_size");
  for (auto [record, model, file] :
       {std::tuple{"evaluate_multi", "multi_output", "fit_multi_val.npz"},
        std::tuple{"evaluate_two", "two_inputs_adam", "fit_two_val.npz"}}) {
    for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
      Loaded l = load(model, mode, batch);
      DataSpec spec = dataSpecOf(*l.imported.model, l.config);
      Examples data = examples(l, file);
      ASSERT_TRUE(data.sampleWeight.defined());
      Trainer trainer(*l.imported.model, l.config, /*log=*/nullptr);
      Logs logs = trainer.evaluate(*dataSourceOf(data, spec, batch));
      double worst =
          compareLogs(logs, *fit.getObject(record), SIZE_MAX, record);
      std::printf("[ keras ] %-15s %-11s worst rel %.1e\n", record,
                  mode == ExecMode::Compiled ? "compiled" : "interpreted",
                  worst);
    }
  }
}

/// Data files of several inputs and outputs are found by layer name; a
/// missing one is an error naming the file, the key and the names the
/// model expects.
TEST(FitParity, MissingArraysNameTheLayers) {
  Loaded l = load("multi_output", ExecMode::Interpreted, 10);
  DataSpec spec = dataSpecOf(*l.imported.model, l.config);
  ASSERT_EQ(spec.targets.size(), 2u);
  EXPECT_EQ(spec.targets[0].name, "class");
  EXPECT_TRUE(spec.targets[0].sparseLabels);
  EXPECT_EQ(spec.targets[1].name, "value");
  EXPECT_FALSE(spec.targets[1].sparseLabels);
  std::string file = e2e::kerasFixture("multi/fit_two_train.npz");
  try {
    loadExamples(file, spec, nullptr);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()),
              file + ": no array 'class' for output 'class' (the model's "
                     "outputs are 'class', 'value'); the archive holds: "
                     "image, label, pixels");
  }
}

} // namespace
