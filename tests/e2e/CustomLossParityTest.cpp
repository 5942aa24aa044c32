//===- CustomLossParityTest.cpp - Losses and metrics written in C++ -------===//
//
// tests/fixtures/keras/custom_loss (written by Keras 3 itself, see
// scripts/keras-fixtures/make_custom_loss_fixtures.py): a model compiled
// with a registered Python loss (Huber) and metric (max |error|). kcc gets
// the same functions in C++ (kcc::CompileOptions::customObjects, under the
// names the archive registers them by), traces them into the step and
// differentiates them: 5 steps, compiled and interpreted, unweighted and
// with sample weights, must reproduce Keras's logs, and evaluate() (which
// runs the functions eagerly) and predict() Keras's numbers.
//
// Custom versions of built-in losses must train exactly as the built-ins
// do (same losses, same weights): mse on float targets, and a sparse
// categorical crossentropy on integer labels (the target dtype a custom
// loss declares).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/Ops.h"
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

/// Keras's Huber (delta 1) per element, averaged over the last axis.
Tensor huber(const Tensor &yTrue, const Tensor &yPred) {
  Tensor d = ops::abs(yPred - yTrue);
  Tensor quadratic = ops::scalar(0.5) * d * d;
  Tensor linear = d - ops::scalar(0.5);
  Tensor small = ops::compare(ops::CompareKind::LE, d, ops::scalar(1.0));
  return ops::reduceMean(ops::select(small, quadratic, linear), {-1});
}

Tensor maxAbsError(const Tensor &yTrue, const Tensor &yPred) {
  return ops::reduceMax(ops::abs(yTrue - yPred), {-1});
}

Tensor meanSquaredError(const Tensor &yTrue, const Tensor &yPred) {
  Tensor d = yTrue - yPred;
  return ops::reduceMean(d * d, {-1});
}

/// -log p[label] of probabilities, labels I32 [batch]: the one-hot rows
/// are gathered from an identity matrix.
Tensor sparseCrossentropy(const Tensor &labels, const Tensor &probs) {
  int64_t classes = probs.dim(-1);
  std::vector<double> eye(classes * classes, 0.0);
  for (int64_t i = 0; i < classes; ++i)
    eye[i * classes + i] = 1.0;
  Tensor oneHot = ops::gather(
      Tensor(NDArray::fromVector({classes, classes}, eye, DType::F32)), labels);
  Tensor clipped = ops::minimum(ops::maximum(probs, ops::scalar(1e-7)),
                                ops::scalar(1.0 - 1e-7));
  return ops::neg(ops::reduceSum(oneHot * ops::log(clipped), {-1}));
}

const json::Object &fixture() {
  static const json::Value root =
      e2e::readFixtureJson("custom_loss/custom_loss.json");
  return *root.getAsObject();
}

NDArray oneHot(const NDArray &labels) {
  int64_t n = labels.dim(0);
  std::vector<double> rows(n * 10, 0.0);
  for (int64_t i = 0; i < n; ++i)
    rows[i * 10 + static_cast<int64_t>(labels.at(i))] = 1.0;
  return NDArray::fromVector({n, 10}, rows, DType::F32);
}

CompileOptions kerasCustomObjects(const TrainingConfig &config) {
  CompileOptions options(config);
  options.customObjects["fixtures>huber"] = {huber};
  options.customObjects["fixtures>max_abs_error"] = {maxAbsError};
  return options;
}

double relativeError(double got, double want) {
  return std::abs(got - want) / std::max(std::abs(want), 1e-12);
}

class CustomLossParity
    : public ::testing::TestWithParam<std::tuple<std::string, ExecMode>> {};

TEST_P(CustomLossParity, FiveStepsEvaluateAndPredictReproduceKeras) {
  const auto &[name, mode] = GetParam();
  const char *modeName =
      mode == ExecMode::Compiled ? "compiled" : "interpreted";
  const json::Object &record = *fixture().getObject("cases")->getObject(name);
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("custom_loss/custom_loss.keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_TRUE(imported.training.has_value());
  // The archive names Python functions: kcc keeps their names.
  EXPECT_EQ(imported.training->loss.custom, "fixtures>huber");
  EXPECT_EQ(imported.training->metrics,
            (std::vector<std::string>{"fixtures>max_abs_error", "mae"}));
  TrainingConfig config = *imported.training;
  config.batch = 32;
  config.mode = mode;
  // Without the functions the config says which one is missing and how to
  // supply it.
  try {
    Trainer missing(*imported.model, config, /*log=*/nullptr);
    ADD_FAILURE() << "a custom loss without its function was accepted";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "custom loss 'fixtures>huber' is Python code, which kcc "
                  "cannot run; give a built-in loss with --loss"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("kcc::CompileOptions::customObjects"),
              std::string::npos)
        << e.what();
  }

  NDArray x, labels, w;
  e2e::kerasBatch(x, labels);
  NDArray y = oneHot(labels);
  if (const json::Array *weights = record.getArray("sample_weight")) {
    std::vector<double> v = numbers(*weights);
    w = NDArray::fromVector({static_cast<int64_t>(v.size())}, v, DType::F32);
  }
  Trainer trainer(*imported.model, kerasCustomObjects(config),
                  /*log=*/nullptr);
  const json::Array &steps = *record.getArray("steps");
  ASSERT_EQ(steps.size(), 5u);
  double worstLoss = 0, worstMetric = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    const json::Object &logs = *steps[s].getAsObject();
    StepResult r = w.defined() ? trainer.trainOnBatch(x, y, w)
                               : trainer.trainOnBatch(x, y);
    double lossErr = relativeError(r.loss, *logs.getNumber("loss"));
    worstLoss = std::max(worstLoss, lossErr);
    EXPECT_LE(lossErr, 1e-4) << name << " step " << s << ": Keras "
                             << *logs.getNumber("loss") << ", kcc " << r.loss;
    ASSERT_EQ(r.metrics.size(), 2u);
    ASSERT_EQ(trainer.executable()->metricNames(),
              (std::vector<std::string>{"max_abs_error", "mae"}));
    const char *metrics[] = {"max_abs_error", "mae"};
    for (size_t k = 0; k < 2; ++k) {
      const char *metric = metrics[k];
      double err = relativeError(r.metrics[k], *logs.getNumber(metric));
      worstMetric = std::max(worstMetric, err);
      EXPECT_LE(err, 1e-4) << name << " step " << s << " " << metric;
    }
  }

  // evaluate() runs the C++ functions eagerly on the predictions, in
  // batches of 12 (the last one partial), weighted as Keras weighs them.
  ArrayDataSource data(
      ExampleArray::fromNDArray(x, "x"), ExampleArray::fromNDArray(y, "y"),
      *fixture().getInteger("evaluate_batch_size"), DType::F32, DType::F32,
      w.defined() ? ExampleArray::fromNDArray(w, "w") : ExampleArray());
  Logs evaluated = trainer.evaluate(data);
  const json::Object &kerasEval = *record.getObject("evaluate");
  double worstEval = 0;
  for (const char *key : {"loss", "max_abs_error", "mae"}) {
    ASSERT_TRUE(evaluated.count(key)) << key;
    double err = relativeError(evaluated[key], *kerasEval.getNumber(key));
    worstEval = std::max(worstEval, err);
    EXPECT_LE(err, 1e-4) << name << " evaluate " << key << ": Keras "
                         << *kerasEval.getNumber(key) << ", kcc "
                         << evaluated[key];
  }

  const json::Array &predict = *record.getArray("predict");
  NDArray p = trainer.predict(x);
  double worstPredict = 0;
  for (size_t i = 0; i < predict.size(); ++i) {
    std::vector<double> row = numbers(*predict[i].getAsArray());
    for (size_t j = 0; j < row.size(); ++j)
      worstPredict =
          std::max(worstPredict, std::abs(p.at(i * row.size() + j) - row[j]));
  }
  EXPECT_LE(worstPredict, 1e-5) << name;
  std::printf("[ keras ] custom loss %-13s %-11s worst rel: loss %.1e, "
              "metrics %.1e, evaluate %.1e; predict abs %.1e\n",
              name.c_str(), modeName, worstLoss, worstMetric, worstEval,
              worstPredict);
}

INSTANTIATE_TEST_SUITE_P(
    KerasCustomLoss, CustomLossParity,
    ::testing::Combine(::testing::Values(std::string("unweighted"),
                                         std::string("sample_weight")),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// Trains `steps` steps of `options` on (x, y); returns each loss, then
/// appends the final weights' elements.
std::vector<double> train(Model &model, const CompileOptions &options,
                          const NDArray &x, const NDArray &y,
                          std::vector<double> &weights) {
  std::vector<NDArray> initial = model.getWeights();
  Trainer trainer(model, options, /*log=*/nullptr);
  std::vector<double> losses;
  for (int s = 0; s < 5; ++s)
    losses.push_back(trainer.trainOnBatch(x, y).loss);
  for (const NDArray &a : trainer.getWeights()) {
    std::vector<double> v = a.toVector();
    weights.insert(weights.end(), v.begin(), v.end());
  }
  model.setWeights(initial);
  return losses;
}

struct BuiltInCase {
  const char *fixture;
  LossKind builtIn;
  CustomObject custom;
};

class CustomEqualsBuiltIn
    : public ::testing::TestWithParam<std::tuple<int, ExecMode>> {};

/// A custom loss is differentiated like the built-in it restates: the
/// same losses and, after 5 Adam steps, the same weights.
TEST_P(CustomEqualsBuiltIn, SameLossesAndWeights) {
  const auto &[which, mode] = GetParam();
  BuiltInCase c = which == 0
                      ? BuiltInCase{"custom_loss/custom_loss.keras",
                                    LossKind::MeanSquaredError,
                                    {meanSquaredError}}
                      : BuiltInCase{"weighting/sample_weight.keras",
                                    LossKind::SparseCategoricalCrossentropy,
                                    {sparseCrossentropy, DType::I32, Shape{}}};
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture(c.fixture));
  NDArray x, labels;
  e2e::kerasBatch(x, labels);
  NDArray y = which == 0 ? oneHot(labels) : labels;

  TrainingConfig config;
  config.batch = 32;
  config.mode = mode;
  config.loss.kind = c.builtIn;
  config.metrics = {which == 0 ? "mae" : "accuracy"};
  std::vector<double> builtInWeights, customWeights;
  std::vector<double> builtIn =
      train(*imported.model, config, x, y, builtInWeights);

  CompileOptions custom(config);
  custom.customObjects["my_loss"] = c.custom;
  custom.config.loss.custom = "my_loss";
  custom.config.metrics = {which == 0 ? "mae" : "accuracy", "my_loss"};
  std::vector<double> mine =
      train(*imported.model, custom, x, y, customWeights);

  ASSERT_EQ(builtIn.size(), mine.size());
  double worstLoss = 0, worstWeight = 0;
  for (size_t s = 0; s < builtIn.size(); ++s) {
    worstLoss = std::max(worstLoss, relativeError(mine[s], builtIn[s]));
    EXPECT_LE(relativeError(mine[s], builtIn[s]), 1e-5) << "step " << s;
  }
  ASSERT_EQ(builtInWeights.size(), customWeights.size());
  for (size_t i = 0; i < builtInWeights.size(); ++i)
    worstWeight =
        std::max(worstWeight, std::abs(builtInWeights[i] - customWeights[i]));
  EXPECT_LE(worstWeight, 1e-5);
  // The loss trained on is a step: a different one would change them.
  EXPECT_GT(std::abs(builtIn.front() - builtIn.back()), 1e-3);
  std::printf("[ custom ] %s as C++ %s: losses rel %.1e, weights abs %.1e\n",
              lossName(c.builtIn).str().c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted",
              worstLoss, worstWeight);
}

INSTANTIATE_TEST_SUITE_P(
    Losses, CustomEqualsBuiltIn,
    ::testing::Combine(::testing::Values(0, 1),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::string(std::get<0>(info.param) == 0 ? "mse" : "sparse_ce") +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// A model of two outputs: a custom loss on one output (and a custom
/// metric logged under the output's name) trains as the built-in one.
TEST(CustomLoss, OnOneOutputOfSeveral) {
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("multi/multi_output.keras"));
  NDArray x, labels;
  e2e::kerasBatch(x, labels);
  NDArray value = NDArray::empty({32, 1}, DType::F32);
  for (int64_t i = 0; i < 32; ++i)
    value.set(i, static_cast<float>(labels.at(i)) / 9.0f);
  TrainingConfig config = *imported.training;
  config.batch = 32;
  ASSERT_EQ(config.outputs.size(), 2u);
  ASSERT_EQ(config.outputs[1].loss.kind, LossKind::MeanSquaredError);
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    config.mode = mode;
    CompileOptions custom(config);
    custom.customObjects["my_mse"] = {meanSquaredError};
    custom.config.outputs[1].loss.custom = "my_mse";
    custom.config.outputs[1].metrics = {"my_mse"};
    Executable builtIn = e2e::jitQuietly(*imported.model, config);
    JitOptions quiet;
    quiet.log = nullptr;
    Executable mine = jit(*imported.model, custom, quiet);
    EXPECT_EQ(mine.metricNames(),
              (std::vector<std::string>{"class_loss", "value_loss",
                                        "class_accuracy", "value_my_mse"}));
    for (int s = 0; s < 5; ++s) {
      StepResult a = builtIn.step({x}, {labels, value});
      StepResult b = mine.step({x}, {labels, value});
      EXPECT_LE(relativeError(b.loss, a.loss), 1e-5) << "step " << s;
      ASSERT_EQ(b.metrics.size(), 4u);
      // value_loss is the mse the metric reports too.
      EXPECT_LE(relativeError(b.metrics[1], a.metrics[1]), 1e-5);
      EXPECT_LE(relativeError(b.metrics[3], b.metrics[1]), 1e-6);
    }
  }
}

std::string compileError(Model &model, const CompileOptions &options) {
  try {
    Trainer trainer(model, options, /*log=*/nullptr);
    NDArray x, labels;
    e2e::kerasBatch(x, labels);
    trainer.trainOnBatch(x, oneHot(labels));
  } catch (const Error &e) {
    return e.what();
  }
  return "no error";
}

/// Custom objects that cannot train say which and why, before any step.
TEST(CustomLoss, BadFunctionsAreClearErrors) {
  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("custom_loss/custom_loss.keras"));
  TrainingConfig config;
  config.batch = 32;
  config.loss.custom = "mine";

  CompileOptions unknown(config);
  EXPECT_NE(compileError(*imported.model, unknown)
                .find("unknown loss 'mine' (expected sparse_categorical_"
                      "crossentropy"),
            std::string::npos)
      << compileError(*imported.model, unknown);

  CompileOptions scalarPerBatch(config);
  scalarPerBatch.customObjects["mine"] = {[](const Tensor &y, const Tensor &p) {
    return ops::reduceMean(meanSquaredError(y, p), {0});
  }};
  // A scalar is a loss (unweighted), as in Keras.
  EXPECT_EQ(compileError(*imported.model, scalarPerBatch), "no error");

  CompileOptions wrongShape(config);
  wrongShape.customObjects["mine"] = {[](const Tensor &y, const Tensor &p) {
    return ops::reduceMean(y - p, {0}); // [10]: not one value per example
  }};
  std::string err = compileError(*imported.model, wrongShape);
  EXPECT_NE(err.find("custom loss 'mine' must be (y_true, y_pred: "
                     "'tensor<32x10xf32>') -> float values [32, ...] or a "
                     "float scalar, y_true with the batch first; got "
                     "'(tensor<32x10xf32>, tensor<32x10xf32>) -> "
                     "tensor<10xf32>'"),
            std::string::npos)
      << err;

  CompileOptions throws(config);
  throws.customObjects["mine"] = {[](const Tensor &y, const Tensor &p) {
    return ops::matmul(y, p); // [32, 10] x [32, 10]
  }};
  err = compileError(*imported.model, throws);
  EXPECT_EQ(err.rfind("compile: custom loss 'mine': ", 0), 0u) << err;

  CompileOptions constant(config);
  constant.customObjects["mine"] = {
      [](const Tensor &, const Tensor &) { return ops::scalar(1.0); }};
  err = compileError(*imported.model, constant);
  EXPECT_NE(err.find("custom loss 'mine' must return a value computed from "
                     "y_true and y_pred"),
            std::string::npos)
      << err;
}

} // namespace
