//===- NestedParityTest.cpp - Models used as layers train as in Keras -----===//
//
// The fixtures of scripts/keras-fixtures/make_nested_fixtures.py, written
// by Keras 3 itself: a siamese tower (one Sequential and one Dense object
// each called twice), a transfer-learning model (a preprocessing
// Sequential, a frozen base and a trainable block called with
// training=False), a Sequential holding a functional model holding a
// Sequential, a keras.layers.Pipeline called twice, and MobileNetV2 as the
// base of a new head. Each nested model
// imports with its weights from the archive's nested groups; from them,
// kcc must reproduce, compiled and interpreted:
//
//  - Keras's predict before and after 5 Adam steps: 1e-5;
//  - the loss of each of those steps: 1e-4 relative;
//  - for MobileNetV2, one SGD step's update of every trainable weight, as
//    one norm, within 3x Keras's own difference when the batch's rows are
//    reordered, and the moving statistics within 1e-3;
//
// and a trained model saves to a .keras whose config keeps the nested
// models and whose weights and optimizer slots reload bit-exactly; the
// same models as legacy .h5 and to_json() predict as Keras does.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/ModelSpec.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

using e2e::kerasFixture;

const json::Object &nestedJson() {
  static const json::Value value = e2e::readFixtureJson("nested/nested.json");
  return *value.getAsObject();
}

std::string tempPath(const std::string &name) {
  llvm::SmallString<128> dir;
  llvm::sys::fs::createUniqueDirectory("kcc-nested", dir);
  return (dir + "/" + name).str();
}

using Param = std::tuple<std::string, ExecMode>;

class NestedParity : public ::testing::TestWithParam<Param> {};

TEST_P(NestedParity, StepsPredictAndSaveMatchKeras) {
  const auto &[name, mode] = GetParam();
  ASSERT_EQ(*nestedJson().getInteger("steps"), 5);
  const json::Object &record = *nestedJson().getObject(name);
  keras::ImportedModel imported =
      keras::importKerasArchive(kerasFixture("nested/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  // A shared layer or model holds one set of weights: as many as Keras's.
  EXPECT_EQ(imported.model->parameters().size(),
            record.getArray("initial_weights")->size());
  // `base.trainable = False` freezes every layer of the base, no other.
  for (const keras::SpecLayer &l : imported.specLayers)
    for (const keras::SpecLayer &inner : l.layers)
      if (!inner.isModel())
        EXPECT_EQ(imported.model->getLayer(inner.name).trainable(),
                  l.name != "base")
            << l.name << "/" << inner.name;

  NDArray x, y;
  e2e::kerasBatch(x, y);
  TrainingConfig config = e2e::kerasAdamConfig(record, mode);
  Executable exe = e2e::jitQuietly(*imported.model, config);
  double worstInitial = e2e::comparePredict(
      exe.predict(x), *record.getArray("initial_predict"), name + " initial");
  std::vector<double> expected = e2e::numbers(*record.getArray("step_losses"));
  double worstLoss = e2e::expectKerasLosses(exe, x, y, expected, name).relative;
  NDArray trained = exe.predict(x);
  double worstFinal = e2e::comparePredict(
      trained, *record.getArray("final_predict"), name + " final");
  std::printf("[ keras ] %s (%s): worst loss relative error %.2e, predict "
              "error %.2e initial, %.2e after 5 steps\n",
              name.c_str(), execModeName(mode), worstLoss, worstInitial,
              worstFinal);

  // Saved and read back: the same weights, bit for bit, under the nested
  // groups Keras reads; the config keeps the nested models.
  std::string path = tempPath(name + ".keras");
  keras::saveKerasArchive(path, imported, captureState(exe), config);
  keras::ImportedModel back = keras::importKerasArchive(path);
  std::vector<NDArray> want = exe.getWeights();
  std::vector<Parameter> got = back.model->parameters();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i].value.toVector(), want[i].toVector()) << got[i].name;
  // The optimizer's slots go through Keras's variable order (the nested
  // layers depth first) and come back to kcc's.
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_TRUE(ckpt.optimizer);
  std::vector<NDArray> slots = exe.getOptimizerState();
  ASSERT_EQ(ckpt.optimizer->slots.size(), slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    EXPECT_EQ(ckpt.optimizer->slots[i].toVector(), slots[i].toVector())
        << "slot " << i;
  size_t nestedModels = 0;
  for (const keras::SpecLayer &l : back.specLayers)
    nestedModels += l.isModel();
  EXPECT_GE(nestedModels, 1u);
  EXPECT_EQ(back.specLayers.size(), imported.specLayers.size());
  std::optional<std::string> text =
      keras::readArchiveMember(path, "config.json", keras::kMaxJsonBytes);
  ASSERT_TRUE(text);
  json::Value saved = keras::parseJson(*text, path);
  size_t savedModels = 0;
  for (const json::Value &l :
       *saved.getAsObject()->getObject("config")->getArray("layers")) {
    std::optional<llvm::StringRef> cls =
        l.getAsObject()->getString("class_name");
    savedModels +=
        cls == "Sequential" || cls == "Functional" || cls == "Pipeline";
  }
  EXPECT_EQ(savedModels, nestedModels);
  llvm::sys::fs::remove(path);
}

INSTANTIATE_TEST_SUITE_P(
    KerasNestedFixtures, NestedParity,
    ::testing::Combine(
        ::testing::Values("siamese", "transfer", "two_level", "pipeline"),
        ::testing::Values(ExecMode::Compiled, ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

/// The same models as a legacy .h5 (a nested model's group lists all its
/// layers' weights) and as model.to_json() (weights then set from the
/// .keras): Keras's predict, interpreted.
TEST(NestedFormats, LegacyH5AndJsonPredictAsKeras) {
  NDArray x, y;
  e2e::kerasBatch(x, y);
  for (const char *name : {"siamese", "transfer", "two_level", "pipeline"}) {
    SCOPED_TRACE(name);
    const json::Object &record = *nestedJson().getObject(name);
    TrainingConfig config = e2e::kerasAdamConfig(record, ExecMode::Interpreted);
    std::string base = std::string("nested/") + name;
    keras::ImportedModel archive =
        keras::importKerasArchive(kerasFixture(base + ".keras"));
    keras::ImportedModel h5 = keras::importKerasH5(kerasFixture(base + ".h5"));
    ASSERT_TRUE(h5.weightsLoaded);
    Executable fromH5 = e2e::jitQuietly(*h5.model, config);
    double worstH5 = e2e::comparePredict(fromH5.predict(x),
                                         *record.getArray("initial_predict"),
                                         std::string(name) + " .h5");
    keras::ImportedModel spec = keras::importFile(kerasFixture(base + ".json"));
    EXPECT_EQ(spec.specLayerOrder, archive.specLayerOrder);
    spec.model->setWeights(archive.model->getWeights());
    Executable fromJson = e2e::jitQuietly(*spec.model, config);
    double worstJson = e2e::comparePredict(fromJson.predict(x),
                                           *record.getArray("initial_predict"),
                                           std::string(name) + " .json");
    std::printf("[ keras ] %s: predict error %.2e from the .h5, %.2e from "
                "to_json()\n",
                name, worstH5, worstJson);
  }
}

/// make_nested_fixtures.py's image32: the batch padded by 2 zero pixels on
/// each side and repeated on 3 channels.
NDArray image32(const NDArray &x) {
  int64_t n = x.shape()[0];
  NDArray out = NDArray::zeros({n, 32, 32, 3}, DType::F32);
  std::vector<double> v = x.toVector();
  EXPECT_EQ(x.shape(), (Shape{n, 28, 28, 1}));
  std::vector<float> o(n * 32 * 32 * 3, 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t i = 0; i < 28; ++i)
      for (int64_t j = 0; j < 28; ++j)
        for (int64_t c = 0; c < 3; ++c)
          o[((b * 32 + i + 2) * 32 + j + 2) * 3 + c] =
              static_cast<float>(v[(b * 28 + i) * 28 + j]);
  std::copy(o.begin(), o.end(), out.data<float>());
  return out;
}

class NestedMobileNet : public ::testing::TestWithParam<ExecMode> {};

TEST_P(NestedMobileNet, OneSgdStepUpdatesEveryWeightAsKeras) {
  ExecMode mode = GetParam();
  const json::Object &record = *nestedJson().getObject("mobilenet");
  keras::ImportedModel imported =
      keras::importKerasArchive(kerasFixture("nested/mobilenet.keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  ASSERT_EQ(imported.model->parameters().size(),
            static_cast<size_t>(*record.getInteger("weights")));
  keras::ImportedModel stepped =
      keras::importKerasArchive(kerasFixture("nested/mobilenet.keras"));
  keras::loadWeightsH5File(stepped,
                           kerasFixture("nested/mobilenet_sgd.weights.h5"));

  NDArray x, y;
  e2e::kerasBatch(x, y);
  TrainingConfig config;
  config.batch = 32;
  config.optimizer.kind = OptimizerKind::SGD;
  config.optimizer.learningRate = *record.getNumber("sgd_learning_rate");
  config.loss.kind = LossKind::SparseCategoricalCrossentropy;
  config.mode = mode;
  std::vector<Parameter> before = imported.model->parameters();
  std::vector<Parameter> keras = stepped.model->parameters();
  Executable exe = e2e::jitQuietly(*imported.model, config);
  exe.step(image32(x), y);
  std::vector<NDArray> after = exe.getWeights();
  ASSERT_EQ(after.size(), before.size());

  double diff = 0, norm = 0, worstMoving = 0;
  size_t moving = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    std::vector<double> w0 = before[i].value.toVector();
    std::vector<double> ours = after[i].toVector();
    std::vector<double> theirs = keras[i].value.toVector();
    if (!before[i].trainable) {
      ++moving;
      for (size_t k = 0; k < w0.size(); ++k)
        worstMoving = std::max(worstMoving, std::abs(ours[k] - theirs[k]));
      continue;
    }
    for (size_t k = 0; k < w0.size(); ++k) {
      double du = ours[k] - w0[k], dk = theirs[k] - w0[k];
      diff += (du - dk) * (du - dk);
      norm += dk * dk;
    }
  }
  EXPECT_EQ(moving,
            static_cast<size_t>(*record.getInteger("moving_statistics")));
  double relative = std::sqrt(diff / norm);
  double noise = *record.getNumber("keras_reorder_relative_update_difference");
  std::printf("[ keras ] mobilenet base (%s): one SGD step, update relative "
              "difference %.2e (Keras reordered: %.2e), moving statistics "
              "within %.2e\n",
              execModeName(mode), relative, noise, worstMoving);
  EXPECT_GT(norm, 0);
  EXPECT_LE(relative, 3 * noise);
  EXPECT_LE(worstMoving, 1e-3);
}

INSTANTIATE_TEST_SUITE_P(KerasNestedFixtures, NestedMobileNet,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const auto &info) {
                           return std::string(info.param == ExecMode::Compiled
                                                  ? "compiled"
                                                  : "interpreted");
                         });

} // namespace
