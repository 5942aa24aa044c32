//===- LayerParityTest.cpp - kcc's layers train as Keras's do -------------===//
//
// The fixtures of scripts/keras-fixtures/make_layer_fixtures.py, written by
// Keras 3 itself: an MLP with every activation kcc has (strings and
// layers, PReLU's trainable alpha included), a model joining two branches
// in every merge layer, and a CNN with padding, cropping, upsampling, a
// Concatenate along the width and global pooling; and the vocabulary
// model of make_vocabulary_fixtures.py (Rescaling, Permute, Cropping1D,
// Identity, UnitNormalization, ActivityRegularization, RepeatVector, Dot)
// its GroupNormalization CNN, its RMSNormalization and rms_scaling model
// and its adaptive poolings; and the preprocessing model of
// make_preprocessing_fixtures.py (Normalization adapted and given,
// Resizing, CenterCrop) and its augmentation layers at factor 0 (the
// identity in predict, still clipping in training; RandomGrayscale and
// RandomInvert too); and the 1-D
// convolution variants of make_conv1d_fixtures.py, and Attention and
// AdditiveAttention (make_attention_fixtures.py), and arithmetic with
// numbers saved as keras.ops nodes (make_opsnodes_fixtures.py), and
// TimeDistributed (of layers and of a Sequential, into recurrent layers)
// and the 3-D layers (make_shape3d_fixtures.py). From Keras's initial
// weights, on Keras's batch, kcc must reproduce, compiled and interpreted:
//
//  - Keras's predict on the first examples (initial weights): 1e-5;
//  - the loss of each of 5 Adam steps: 1e-4 relative;
//  - Keras's predict after the 5 steps: 1e-5;
//
// the merging model (the one quick enough for a test on two cores) trains
// one epoch of Fashion-MNIST to the same accuracy in both modes, and a
// model of two inputs (which the Executable cannot take yet) matches
// Keras's predict when run eagerly.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "frontend/Trace.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Trainer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

using e2e::kerasFixture;

const json::Value &layersJson() {
  static const json::Value value = e2e::readFixtureJson("layers.json");
  return value;
}

using Param = std::tuple<std::string, ExecMode>;

class LayerParity : public ::testing::TestWithParam<Param> {};

/// The record of `name`: layers.json's models, vocabulary.json's (the
/// layers of make_vocabulary_fixtures.py) or preprocessing.json's
/// (make_preprocessing_fixtures.py), conv1d.json's
/// (make_conv1d_fixtures.py), attention.json's (make_attention_fixtures.py:
/// Attention, AdditiveAttention, GroupQueryAttention),
/// opsnodes.json's (make_opsnodes_fixtures.py), shape3d.json's
/// (make_shape3d_fixtures.py) or geometric.json's
/// (make_geometric_fixtures.py).
const json::Object &fixtureRoot(const std::string &name) {
  static const json::Value vocabulary = e2e::readFixtureJson("vocabulary.json");
  static const json::Value preprocessing =
      e2e::readFixtureJson("preprocessing.json");
  static const json::Value conv1d = e2e::readFixtureJson("conv1d.json");
  static const json::Value attention = e2e::readFixtureJson("attention.json");
  static const json::Value opsnodes = e2e::readFixtureJson("opsnodes.json");
  static const json::Value shape3d = e2e::readFixtureJson("shape3d.json");
  static const json::Value geometric = e2e::readFixtureJson("geometric.json");
  for (const json::Value *root :
       {&layersJson(), &vocabulary, &preprocessing, &conv1d, &attention,
        &opsnodes, &shape3d, &geometric})
    if (root->getAsObject()->getObject(name))
      return *root->getAsObject();
  return *vocabulary.getAsObject();
}

TEST_P(LayerParity, StepsAndPredictMatchKeras) {
  const auto &[name, mode] = GetParam();
  const json::Object &root = fixtureRoot(name);
  ASSERT_EQ(*root.getInteger("steps"), 5);
  ASSERT_NE(root.getObject(name), nullptr) << name;
  const json::Object &record = *root.getObject(name);

  keras::ImportedModel imported =
      keras::importKerasArchive(kerasFixture(name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);

  NDArray x, y;
  e2e::kerasBatch(x, y);
  Executable exe =
      e2e::jitQuietly(*imported.model, e2e::kerasAdamConfig(record, mode));

  double worstInitial = e2e::comparePredict(
      exe.predict(x), *record.getArray("initial_predict"), name + " initial");

  std::vector<double> expected = e2e::numbers(*record.getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  double worstLoss = e2e::expectKerasLosses(exe, x, y, expected, name).relative;

  double worstFinal = e2e::comparePredict(
      exe.predict(x), *record.getArray("final_predict"), name + " final");
  std::printf("[ keras ] %s (%s): worst loss relative error %.2e, predict "
              "error %.2e initial, %.2e after 5 steps\n",
              name.c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted",
              worstLoss, worstInitial, worstFinal);
}

INSTANTIATE_TEST_SUITE_P(
    KerasLayerFixtures, LayerParity,
    ::testing::Combine(
        ::testing::Values("activations", "merging", "vision", "vocabulary",
                          "group_norm", "rms_norm", "adaptive", "preprocessing",
                          "color_augmentation", "augmentation", "conv1d",
                          "attention", "grouped_attention", "opsnodes",
                          "td_dense", "td_video", "td_sequential", "volume",
                          "volume_dropout", "geometric", "conv_lstm"),
        ::testing::Values(ExecMode::Compiled, ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// A functional model of two inputs (kcc's Executable takes one): run
/// eagerly layer call by layer call, and its traced @forward (two inputs)
/// interpreted and compiled, it matches Keras's predict.
TEST(LayerTwoInputs, ForwardMatchesKerasPredictInEveryMode) {
  const json::Object &record =
      *layersJson().getAsObject()->getObject("two_inputs");
  keras::ImportedModel imported =
      keras::importKerasArchive(kerasFixture("two_inputs.keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_EQ(imported.model->inputShapes(),
            (std::vector<Shape>{{28, 28, 1}, {784}}));
  NDArray x, y;
  e2e::kerasBatch(x, y);
  std::vector<Tensor> out = imported.model->call(
      {Tensor(x), Tensor(x.reshaped({32, 784}))}, CallContext{});
  ASSERT_EQ(out.size(), 1u);
  double worst = e2e::comparePredict(out[0].array(),
                                     *record.getArray("predict"), "two_inputs");
  std::printf("[ keras ] two_inputs (eager): predict error %.2e\n", worst);

  mlir::MLIRContext ctx;
  auto module = traceForward(ctx, *imported.model);
  auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward");
  ASSERT_TRUE(forward);
  int inputs = 0;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    inputs += forward.getArgAttr(i, "kc.input") ? 1 : 0;
  EXPECT_EQ(inputs, 2);

  // @forward(params..., image, pixels), interpreted and compiled.
  std::vector<NDArray> args;
  for (const Parameter &p : imported.model->parameters())
    args.push_back(p.value);
  args.push_back(x);
  args.push_back(x.reshaped({32, 784}));
  Interpreter interpreter;
  double worstInterpreted = e2e::comparePredict(
      interpreter.run(forward, args)[0], *record.getArray("predict"),
      "two_inputs interpreted");
  CompiledFunction compiled = CompiledFunction::compile(*module, "forward");
  double worstCompiled =
      e2e::comparePredict(compiled.run(args)[0], *record.getArray("predict"),
                          "two_inputs compiled");
  std::printf("[ keras ] two_inputs (@forward): predict error %.2e "
              "interpreted, %.2e compiled\n",
              worstInterpreted, worstCompiled);
}

/// RandomFlip: Keras's predict (the identity) through a model with one;
/// in training, the flips drawn in the step are the same compiled and
/// interpreted (counter-based), so the two modes' losses agree.
TEST(LayerAugmentation, RandomFlipPredictsAsKerasAndDrawsAlikeInBothModes) {
  const json::Object &root = fixtureRoot("flip_predict");
  keras::ImportedModel imported =
      keras::importKerasArchive(kerasFixture("flip_predict.keras"));
  NDArray x, y;
  e2e::kerasBatch(x, y);
  std::vector<std::vector<double>> losses(2);
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    TrainingConfig config;
    config.mode = mode;
    Executable exe = e2e::jitQuietly(*imported.model, config);
    double worst = e2e::comparePredict(
        exe.predict(x),
        *root.getObject("flip_predict")->getArray("initial_predict"),
        "flip_predict");
    std::printf("[ keras ] flip_predict (%s): predict error %.2e\n",
                execModeName(mode), worst);
    for (int step = 0; step < 3; ++step)
      losses[mode == ExecMode::Compiled ? 0 : 1].push_back(exe.step(x, y).loss);
  }
  for (int step = 0; step < 3; ++step)
    EXPECT_NEAR(losses[0][step], losses[1][step],
                1e-6 * std::abs(losses[1][step]))
        << "step " << step;
}

/// One epoch of merging.keras from Keras's weights, compiled and
/// interpreted, through the Trainer (fit + evaluate).
TEST(LayerOneEpoch, MergingModelCompiledMatchesInterpreter) {
  const FashionMnist &data = e2e::fashionMnist();
  double accuracy[2];
  for (int k = 0; k < 2; ++k) {
    keras::ImportedModel imported =
        keras::importKerasArchive(kerasFixture("merging.keras"));
    TrainingConfig o;
    o.metrics = {"accuracy"};
    o.mode = k == 0 ? ExecMode::Compiled : ExecMode::Interpreted;
    Trainer trainer(*imported.model, o);
    FitOptions fit;
    fit.epochs = 1;
    fit.batchSize = 32;
    fit.verbose = 0;
    trainer.fit(data.train, fit);
    accuracy[k] = trainer.evaluate(data.test).at("accuracy");
    std::printf("[ e2e ] merging 1 epoch %s: test accuracy %.4f\n",
                execModeName(o.mode), accuracy[k]);
  }
  EXPECT_GE(accuracy[0], 0.82);
  EXPECT_GE(accuracy[1], 0.82);
  EXPECT_LE(std::abs(accuracy[0] - accuracy[1]), 0.005);
}

} // namespace
