//===- CustomLayerParityTest.cpp - A user's layer class trains as in Keras ===//
//
// scripts/keras-fixtures/make_custom_layer_fixtures.py saves, with Keras 3, a
// model holding ScaledDense, a layer class registered in Python under
// "demo>ScaledDense". With the C++ class examples/embed/ScaledDense.h
// registers under that name, kcc imports the archive with its weights and
// must reproduce, compiled and interpreted: Keras's predict before and
// after 5 Adam steps (1e-5) and the loss of each step (1e-4 relative).
// The same class built in C++ saves under Keras's registered name and
// module and reads back with its predictions; a registered name kcc does
// not know stays an error naming how to supply it.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "examples/embed/ScaledDense.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/ModelSpec.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <mutex>

using namespace kcc;
namespace json = llvm::json;

namespace {

void registerOnce() {
  static std::once_flag once;
  std::call_once(once, demo::registerScaledDense);
}

const json::Object &record() {
  static const json::Value value =
      e2e::readFixtureJson("custom/scaled_dense.json");
  return *value.getAsObject()->getObject("scaled_dense");
}

class CustomLayerParity : public ::testing::TestWithParam<ExecMode> {};

TEST_P(CustomLayerParity, StepsAndPredictMatchKeras) {
  registerOnce();
  ExecMode mode = GetParam();
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("custom/scaled_dense.keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  EXPECT_EQ(imported.model->getLayer("scaled_dense").className(),
            "ScaledDense");
  EXPECT_EQ(imported.model->parameters().size(),
            record().getArray("initial_weights")->size());

  NDArray x, y;
  e2e::kerasBatch(x, y);
  Executable exe =
      e2e::jitQuietly(*imported.model, e2e::kerasAdamConfig(record(), mode));
  double worstInitial = e2e::comparePredict(
      exe.predict(x), *record().getArray("initial_predict"), "initial");
  std::vector<double> expected =
      e2e::numbers(*record().getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  double worstLoss =
      e2e::expectKerasLosses(exe, x, y, expected, "scaled_dense").relative;
  double worstFinal = e2e::comparePredict(
      exe.predict(x), *record().getArray("final_predict"), "final");
  std::printf("[ keras ] scaled_dense (%s): worst loss relative error %.2e, "
              "predict error %.2e initial, %.2e after 5 steps\n",
              execModeName(mode), worstLoss, worstInitial, worstFinal);
}

INSTANTIATE_TEST_SUITE_P(Modes, CustomLayerParity,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const auto &info) {
                           return std::string(execModeName(info.param));
                         });

TEST(CustomLayer, BuiltInCppSavesUnderItsRegisteredName) {
  registerOnce();
  Tensor in = Input({6});
  Tensor h = demo::ScaledDense(4).named("scaled")(in);
  Model model(in, Dense(3).named("head")(h), "custom", /*seed=*/7);
  NDArray x = NDArray::empty({5, 6}, DType::F32);
  for (int64_t i = 0; i < x.numel(); ++i)
    x.set(i, 0.1 * static_cast<double>(i % 7) - 0.3);
  TrainingConfig config;
  config.loss = llvm::cantFail(LossConfig::parse("mse"));
  Executable exe = e2e::jitQuietly(model, config);
  NDArray before = exe.predict(x);

  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("kcc-custom-layer", dir));
  std::string path = (dir + "/custom.keras").str();
  keras::saveKerasArchive(path, model, captureState(exe), config);
  std::optional<std::string> text =
      keras::readArchiveMember(path, "config.json", keras::kMaxJsonBytes);
  ASSERT_TRUE(text);
  json::Value saved = keras::parseJson(*text, path);
  const json::Object *scaled = nullptr;
  for (const json::Value &l :
       *saved.getAsObject()->getObject("config")->getArray("layers"))
    if (l.getAsObject()->getString("class_name") == "ScaledDense")
      scaled = l.getAsObject();
  ASSERT_NE(scaled, nullptr);
  // As Keras writes a registered class: module null, "package>Class".
  EXPECT_EQ(scaled->getString("registered_name"), "demo>ScaledDense");
  ASSERT_NE(scaled->get("module"), nullptr);
  EXPECT_EQ(scaled->get("module")->kind(), json::Value::Null);
  EXPECT_EQ(scaled->getObject("config")->getInteger("units"), 4);

  keras::ImportedModel back = keras::importKerasArchive(path);
  Executable again = e2e::jitQuietly(*back.model, config);
  EXPECT_EQ(again.predict(x).toVector(), before.toVector());
  llvm::sys::fs::remove_directories(dir);
}

TEST(CustomLayer, RegisteringTwiceIsAnError) {
  registerOnce();
  try {
    demo::registerScaledDense();
    FAIL() << "registered twice";
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "registerLayerClass: 'demo>ScaledDense' is "
                           "already registered");
  }
}

} // namespace
