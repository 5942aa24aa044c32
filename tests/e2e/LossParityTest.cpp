//===- LossParityTest.cpp - Every Keras loss trains as Keras trains it ----===//
//
// tests/fixtures/keras/losses (written by Keras 3 itself, see
// scripts/keras-fixtures/make_loss_fit_fixtures.py): per loss of
// keras.losses, a 6-8-3 model Keras compiled with it (as a string or as a
// Loss object with arguments: label smoothing, logits, focal gamma/alpha,
// ignore_class, axes, reductions), fitted 5 epochs on one batch of 16, some
// with sample weights. kcc imports the .keras (compile_config included),
// runs the same 5 steps compiled and interpreted and must log Keras's
// losses within 1e-4 relative; evaluate() in batches of 6 afterwards (the
// loss IR run on the host) must match Keras's within 1e-5 relative. Five
// cases also log metrics: those that average a loss function (mape, msle,
// logcosh, cosine_similarity, kl_divergence, poisson, the hinges, the
// crossentropies), computed by the same loss IR, and the correlations
// (pearson_correlation, concordance_correlation), checked alike.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/DataSource.h"
#include "frontend/training/Trainer.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &record() {
  static const json::Value root = e2e::readFixtureJson("losses/fit.json");
  return *root.getAsObject();
}

/// The fixture's array `name` of the batch, [16, ...] of `dtype`.
NDArray batchArray(const std::string &name, DType dtype) {
  const json::Object &data = *record().getObject("data");
  std::vector<double> values = e2e::numbers(*data.getArray(name));
  int64_t rows = static_cast<int64_t>(*record().getInteger("batch"));
  int64_t cols = static_cast<int64_t>(values.size()) / rows;
  Shape shape = cols == 1 ? Shape{rows} : Shape{rows, cols};
  return NDArray::fromVector(shape, values, dtype);
}

struct Mode {
  ExecMode mode;
  const char *name;
};

void PrintTo(const Mode &mode, std::ostream *os) { *os << mode.name; }

class LossParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(LossParity, FitAndEvaluateReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object *found = record().getObject("cases")->getObject(name);
  ASSERT_NE(found, nullptr) << "fit.json has no case " << name;
  const json::Object &c = *found;
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("losses/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  bool weighted = *c.getBoolean("weighted");
  config.batch = *record().getInteger("batch");
  config.mode = mode.mode;
  config.sampleWeight = weighted;
  // Where Keras 3.15's saved config drops an argument (Huber's delta).
  if (std::optional<llvm::StringRef> text = c.getString("kcc_loss")) {
    LossConfig trained = llvm::cantFail(LossConfig::parse(*text));
    ASSERT_EQ(trained.kind, config.loss.kind);
    config.loss = trained;
  }

  std::string target = c.getString("target")->str();
  NDArray x = batchArray("x", DType::F32);
  // Integer labels: class indices, or Circle's groups.
  bool labels = target == "labels" || target == "groups";
  NDArray y = batchArray(target, labels ? DType::I32 : DType::F32);
  NDArray w = weighted ? batchArray("weights", DType::F32) : NDArray();
  Trainer trainer(*imported.model, config, /*log=*/nullptr);

  std::vector<double> losses = e2e::numbers(*c.getArray("loss"));
  ASSERT_EQ(losses.size(), 5u);
  double worst = 0;
  for (size_t s = 0; s < losses.size(); ++s) {
    StepResult r =
        weighted ? trainer.trainOnBatch(x, y, w) : trainer.trainOnBatch(x, y);
    double rel =
        std::abs(r.loss - losses[s]) / std::max(1e-3, std::abs(losses[s]));
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-4) << name << " step " << s << ": Keras " << losses[s]
                         << ", kcc " << r.loss;
    // The metrics that average a loss function, by Keras's names.
    const std::vector<std::string> &names = trainer.executable()->metricNames();
    ASSERT_EQ(names.size(), r.metrics.size());
    const json::Object *metrics = c.getObject("metrics");
    ASSERT_EQ(names.size(), metrics ? metrics->size() : 0u);
    for (size_t k = 0; k < names.size(); ++k) {
      const json::Array *values = metrics->getArray(names[k]);
      ASSERT_NE(values, nullptr) << "Keras logs no " << names[k];
      double keras = e2e::numbers(*values)[s];
      double err =
          std::abs(r.metrics[k] - keras) / std::max(1e-3, std::abs(keras));
      worst = std::max(worst, err);
      EXPECT_LE(err, 1e-4) << name << " step " << s << " " << names[k]
                           << ": Keras " << keras << ", kcc " << r.metrics[k];
    }
  }

  int64_t evalBatch = *record().getInteger("evaluate_batch");
  ArrayDataSource data(ExampleArray::fromNDArray(x, "x"),
                       ExampleArray::fromNDArray(y, "y"), evalBatch, DType::F32,
                       y.dtype(),
                       weighted ? ExampleArray::fromNDArray(w, "sample_weight")
                                : ExampleArray());
  double kerasEval = *c.getNumber("evaluate");
  Logs evaluated = trainer.evaluate(data);
  double kccEval = evaluated.at("loss");
  if (const json::Object *metrics = c.getObject("evaluate_metrics"))
    for (const auto &[key, value] : *metrics) {
      double keras = *value.getAsNumber();
      ASSERT_TRUE(evaluated.count(key.str())) << "kcc logs no " << key.str();
      double err = std::abs(evaluated.at(key.str()) - keras) /
                   std::max(1e-3, std::abs(keras));
      EXPECT_LE(err, 1e-5) << name << " evaluate " << key.str() << ": Keras "
                           << keras << ", kcc " << evaluated.at(key.str());
    }
  double evalRel =
      std::abs(kccEval - kerasEval) / std::max(1e-3, std::abs(kerasEval));
  EXPECT_LE(evalRel, 1e-5) << name << " evaluate: Keras " << kerasEval
                           << ", kcc " << kccEval;
  std::printf("[ keras ] %-28s %-11s worst rel: fit %.1e, evaluate %.1e\n",
              name.c_str(), mode.name, worst, evalRel);
}

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  for (const auto &[key, value] : *record().getObject("cases"))
    names.push_back(key.str());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(
    KerasLosses, LossParity,
    ::testing::Combine(::testing::ValuesIn(caseNames()),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

} // namespace
