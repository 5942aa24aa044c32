//===- MultiIOParityTest.cpp - Several inputs and outputs as Keras --------===//
//
// tests/fixtures/keras/multi (written by Keras 3 itself, see
// scripts/keras-fixtures/make_multi_fixtures.py): a two-head model with
// per-output losses, loss_weights and metrics from its compile_config, a
// two-input Concatenate model, a MultiHeadAttention whose
// attention_mask is the model's second input, and a Softmax over attention
// scores masked by the model's second input (Softmax()(s, mask=keys): kept
// over 0.5, broadcast over the queries, one example with no key kept). From
// Keras's weights, 5 Adam steps on the fixed batch, compiled and interpreted,
// must reproduce every log Keras returned (the total loss within 1e-4 relative,
// each output's loss and metric under Keras's names), and predict must match
// Keras's before and after the steps.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Trainer.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &multiJson() {
  static const json::Value root = e2e::readFixtureJson("multi/multi.json");
  return *root.getAsObject();
}

/// The model's first 4 examples of each input.
std::vector<NDArray> firstRows(const std::vector<NDArray> &inputs) {
  std::vector<NDArray> out;
  for (const NDArray &a : inputs) {
    Shape shape = a.shape();
    shape[0] = 4;
    NDArray rows = NDArray::empty(shape, a.dtype());
    std::memcpy(rows.rawData(), a.rawData(), rows.bytes());
    out.push_back(rows);
  }
  return out;
}

/// Keras's predict record: one array of rows per output, or the rows of
/// the one output.
double comparePredicts(const std::vector<NDArray> &kcc, const json::Value &v,
                       const std::string &what) {
  const json::Array &keras = *v.getAsArray();
  bool several = kcc.size() > 1;
  double worst = 0;
  for (size_t k = 0; k < kcc.size(); ++k)
    worst = std::max(
        worst,
        e2e::comparePredict(kcc[k], several ? *keras[k].getAsArray() : keras,
                            what + " output " + std::to_string(k)));
  return worst;
}

struct Case {
  /// The inputs and targets Keras trained on, from the fixed batch.
  std::vector<NDArray> inputs, targets;
};

Case caseOf(const std::string &name) {
  NDArray x, y;
  e2e::kerasBatch(x, y);
  if (name == "two_inputs_adam")
    return {{x, x.reshaped({32, 784})}, {y}};
  if (name == "attention_mask") {
    // Example i's queries see its first 5 + 7i mod 24 key steps.
    NDArray allowed = NDArray::empty({32, 28, 28}, DType::F32);
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t t = 0; t < 28; ++t)
        for (int64_t s = 0; s < 28; ++s)
          allowed.set((i * 28 + t) * 28 + s, s < 5 + (i * 7) % 24 ? 1.0 : 0.0);
    return {{x, allowed}, {y}};
  }
  if (name == "softmax_mask") {
    // 0.9 on example i's first 5 + 7i mod 24 key steps (none for example
    // 3), 0.1 elsewhere.
    NDArray keys = NDArray::empty({32, 1, 28}, DType::F32);
    for (int64_t i = 0; i < 32; ++i)
      for (int64_t s = 0; s < 28; ++s)
        keys.set(i * 28 + s, i != 3 && s < 5 + (i * 7) % 24 ? 0.9 : 0.1);
    return {{x, keys}, {y}};
  }
  // multi_output: the labels, and label / 9 as [n, 1] float32.
  NDArray value = NDArray::empty({32, 1}, DType::F32);
  for (int64_t i = 0; i < 32; ++i)
    value.set(i, static_cast<float>(y.at(i)) / 9.0f);
  return {{x}, {y, value}};
}

class MultiIOParity
    : public ::testing::TestWithParam<std::tuple<std::string, ExecMode>> {};

TEST_P(MultiIOParity, FiveAdamStepsAndPredictReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const char *modeName =
      mode == ExecMode::Compiled ? "compiled" : "interpreted";
  const json::Object &record = *multiJson().getObject(name);
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("multi/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value()) << imported.trainingError;
  ASSERT_TRUE(imported.trainingError.empty()) << imported.trainingError;
  TrainingConfig config = *imported.training;
  config.batch = 32;
  config.mode = mode;
  Executable exe = e2e::jitQuietly(*imported.model, config);
  Case c = caseOf(name);

  double worstInitial = comparePredicts(exe.predict(firstRows(c.inputs)),
                                        *record.get("initial_predict"),
                                        name + " initial predict");
  const json::Array &steps = *record.getArray("steps");
  ASSERT_EQ(steps.size(), 5u);
  double worstLoss = 0, worstOther = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    const json::Object &logs = *steps[s].getAsObject();
    StepResult r = exe.step(c.inputs, c.targets);
    double want = *logs.getNumber("loss");
    double rel = std::abs(r.loss - want) / std::abs(want);
    worstLoss = std::max(worstLoss, rel);
    EXPECT_LE(rel, 1e-4) << name << " step " << s << ": Keras " << want
                         << ", kcc " << r.loss;
    // Every other log Keras returned, by its name.
    ASSERT_EQ(exe.metricNames().size() + 1, logs.size()) << name;
    for (size_t k = 0; k < exe.metricNames().size(); ++k) {
      const std::string &log = exe.metricNames()[k];
      std::optional<double> keras = logs.getNumber(log);
      ASSERT_TRUE(keras.has_value()) << name << ": Keras logs no " << log;
      double err =
          std::abs(r.metrics[k] - *keras) / std::max(1.0, std::abs(*keras));
      worstOther = std::max(worstOther, err);
      EXPECT_LE(err, 1e-4) << name << " step " << s << " " << log << ": Keras "
                           << *keras << ", kcc " << r.metrics[k];
    }
  }
  double worstFinal =
      comparePredicts(exe.predict(firstRows(c.inputs)),
                      *record.get("final_predict"), name + " final predict");
  std::printf("[ keras ] %-15s %-11s loss: worst rel %.1e, other logs %.1e; "
              "predict %.1e initial, %.1e after 5 steps\n",
              name.c_str(), modeName, worstLoss, worstOther, worstInitial,
              worstFinal);
}

INSTANTIATE_TEST_SUITE_P(
    KerasMultiIO, MultiIOParity,
    ::testing::Combine(::testing::Values(std::string("multi_output"),
                                         std::string("two_inputs_adam"),
                                         std::string("attention_mask"),
                                         std::string("softmax_mask")),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// The Trainer's step and predict of several arrays are the Executable's:
/// Keras's losses again, and the Dataset overloads of fit/evaluate, which
/// take one x and one y, refuse before any step runs (a DataSource of one
/// array per input and output trains them: FitParityTest.cpp).
TEST(MultiIO, TrainerTakesOneArrayPerInputAndOutput) {
  const json::Object &record = *multiJson().getObject("multi_output");
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("multi/multi_output.keras"));
  TrainingConfig config = *imported.training;
  config.batch = 32;
  Trainer trainer(*imported.model, config, /*log=*/nullptr);
  Case c = caseOf("multi_output");
  const json::Array &steps = *record.getArray("steps");
  for (size_t s = 0; s < steps.size(); ++s) {
    double want = *steps[s].getAsObject()->getNumber("loss");
    StepResult r = trainer.trainOnBatch(c.inputs, c.targets);
    EXPECT_LE(std::abs(r.loss - want) / want, 1e-4) << "step " << s;
  }
  EXPECT_EQ(trainer.iterations(), 5);
  ASSERT_NE(trainer.executable(), nullptr);
  EXPECT_EQ(
      trainer.executable()->metricNames(),
      (std::vector<std::string>{"class_loss", "value_loss", "class_accuracy"}));
  comparePredicts(trainer.predict(firstRows(c.inputs)),
                  *record.get("final_predict"), "trainer final predict");

  Dataset data{c.inputs[0], c.targets[0]};
  EXPECT_THROW(trainer.evaluate(data), Error);
  FitOptions quiet;
  quiet.verbose = 0;
  EXPECT_THROW(trainer.fit(data, quiet), Error);
  EXPECT_EQ(trainer.iterations(), 5);
}

/// The compile_config's dicts land per output, in the model's output order,
/// and the step's results carry Keras 3's log names.
TEST(MultiIO, CompileConfigPerOutput) {
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("multi/multi_output.keras"));
  ASSERT_TRUE(imported.training.has_value());
  const TrainingConfig &config = *imported.training;
  ASSERT_EQ(config.outputs.size(), 2u);
  EXPECT_EQ(config.outputs[0].name, "class");
  EXPECT_EQ(config.outputs[0].loss.kind,
            LossKind::SparseCategoricalCrossentropy);
  EXPECT_EQ(config.outputs[0].lossWeight, 1.0);
  EXPECT_EQ(config.outputs[0].metrics, std::vector<std::string>{"accuracy"});
  EXPECT_EQ(config.outputs[1].name, "value");
  EXPECT_EQ(config.outputs[1].loss.kind, LossKind::MeanSquaredError);
  EXPECT_EQ(config.outputs[1].lossWeight, 0.5);
  EXPECT_TRUE(config.outputs[1].metrics.empty());
  EXPECT_EQ(
      config.resultNames(),
      (std::vector<std::string>{"class_loss", "value_loss", "class_accuracy"}));
}

/// Written back (Keras's dicts by output name) and read again, the
/// per-output config is the same.
TEST(MultiIO, CompileConfigRoundTrips) {
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("multi/multi_output.keras"));
  TrainingConfig config = *imported.training;
  config.outputs[1].lossWeight = 0.25;
  config.outputs[1].metrics = {"accuracy"};
  config.outputs[1].loss.kind = LossKind::BinaryCrossentropy;
  llvm::json::Object cc = keras::compileConfigJson(config);
  ASSERT_NE(cc.getObject("loss"), nullptr);
  EXPECT_EQ(cc.getObject("loss_weights")->getNumber("value"), 0.25);
  keras::ImportedModel again = keras::importModelJson(
      keras::kerasConfigJson(*imported.model, config), "saved config.json");
  ASSERT_TRUE(again.training.has_value()) << again.trainingError;
  ASSERT_EQ(again.training->outputs.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const OutputTraining &a = config.outputs[k],
                         &b = again.training->outputs[k];
    EXPECT_EQ(b.name, a.name);
    EXPECT_EQ(b.loss.kind, a.loss.kind);
    EXPECT_EQ(b.lossWeight, a.lossWeight);
    EXPECT_EQ(b.metrics, a.metrics);
  }
  EXPECT_EQ(again.training->resultNames(),
            (std::vector<std::string>{"class_loss", "value_loss",
                                      "class_accuracy", "value_accuracy"}));
}

/// The single-array step and predict refuse a model of several inputs or
/// outputs, saying what to pass instead.
TEST(MultiIO, SingleArrayCallsNameTheCounts) {
  for (const char *name : {"multi_output", "two_inputs_adam"}) {
    keras::ImportedModel imported = keras::importKerasArchive(
        e2e::kerasFixture(std::string("multi/") + name + ".keras"));
    TrainingConfig config = *imported.training;
    config.batch = 32;
    Executable exe = e2e::jitQuietly(*imported.model, config);
    Case c = caseOf(name);
    try {
      exe.step(c.inputs[0], c.targets[0]);
      ADD_FAILURE() << name << ": step(x, y) did not throw";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("pass one array per"),
                std::string::npos)
          << e.what();
    }
    try {
      exe.step(c.inputs, {c.targets[0], c.targets[0], c.targets[0]});
      ADD_FAILURE() << name << ": three targets did not throw";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(
                    "got " + std::to_string(c.inputs.size()) + " and 3"),
                std::string::npos)
          << e.what();
    }
  }
}

} // namespace
