//===- CtcParityTest.cpp - The ctc loss trains as Keras trains it ---------===//
//
// tests/fixtures/keras/ctc (written by Keras 3 itself, see
// scripts/keras-fixtures/make_ctc_fixtures.py): models whose logits are
// [batch, 10 steps, 5 classes] (Dense layers, and an LSTM), compiled by
// Keras with the ctc loss ("ctc", CTC(), CTC(reduction="sum") with sample
// weights), fitted 5 epochs on one batch of 16 label sequences of width 4
// (lengths 0 to 4, repeated labels, padding). kcc imports the .keras, reads
// the batch from Keras's .npz (labels checked and padded to the steps; the
// Trainer pads the 4-wide array given to trainOnBatch alike), runs
// the same 5 steps compiled and interpreted and must log Keras's losses
// within 1e-4 relative; evaluate() in batches of 6 afterwards within 1e-5.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/DataSource.h"
#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &record() {
  static const json::Value root = e2e::readFixtureJson("ctc/fit.json");
  return *root.getAsObject();
}

/// Every row of `a` as one array of `dtype`.
NDArray allRows(const ExampleArray &a, DType dtype) {
  std::vector<int64_t> rows(a.rows());
  std::iota(rows.begin(), rows.end(), 0);
  NDArray out;
  a.gather(rows.data(), a.rows(), dtype, out);
  return out;
}

struct Mode {
  ExecMode mode;
  const char *name;
};

void PrintTo(const Mode &mode, std::ostream *os) { *os << mode.name; }

class CtcParity
    : public ::testing::TestWithParam<std::tuple<std::string, Mode>> {};

TEST_P(CtcParity, FitAndEvaluateReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object *found = record().getObject("cases")->getObject(name);
  ASSERT_NE(found, nullptr) << "fit.json has no case " << name;
  const json::Object &c = *found;
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("ctc/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  ASSERT_EQ(config.loss.kind, LossKind::CTC);
  bool weighted = *c.getBoolean("weighted");
  config.batch = *record().getInteger("batch");
  config.mode = mode.mode;
  config.sampleWeight = weighted;

  DataSpec spec = dataSpecOf(*imported.model, config);
  ASSERT_EQ(spec.targets.size(), 1u);
  EXPECT_TRUE(spec.targets[0].ctcLabels);
  std::string npz =
      e2e::kerasFixture(weighted ? "ctc/weighted.npz" : "ctc/data.npz");
  Examples examples = loadExamples(npz, spec, nullptr);
  // Keras's labels are 4 wide; the step takes them padded to the 10 steps:
  // read from the .npz, and by the Trainer from the array as it is.
  ASSERT_EQ(examples.y[0].rowShape(), Shape{10});
  NDArray x = allRows(examples.x[0], DType::F32);
  NDArray y = readNpzArray(npz, "y");
  ASSERT_EQ(y.shape(), (Shape{16, 4}));
  NDArray w = weighted ? allRows(examples.sampleWeight, DType::F32) : NDArray();
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
  }

  std::unique_ptr<ArrayDataSource> data =
      dataSourceOf(examples, spec, *record().getInteger("evaluate_batch"));
  double kerasEval = *c.getNumber("evaluate");
  double kccEval = trainer.evaluate(*data).at("loss");
  double evalRel =
      std::abs(kccEval - kerasEval) / std::max(1e-3, std::abs(kerasEval));
  EXPECT_LE(evalRel, 1e-5) << name << " evaluate: Keras " << kerasEval
                           << ", kcc " << kccEval;
  std::printf("[ keras ] %-18s %-11s worst rel: fit %.1e, evaluate %.1e\n",
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
    KerasCtc, CtcParity,
    ::testing::Combine(::testing::ValuesIn(caseNames()),
                       ::testing::Values(Mode{ExecMode::Compiled, "compiled"},
                                         Mode{ExecMode::Interpreted,
                                              "interpreted"})),
    [](const auto &info) {
      return std::get<0>(info.param) + "_" + std::get<1>(info.param).name;
    });

} // namespace
