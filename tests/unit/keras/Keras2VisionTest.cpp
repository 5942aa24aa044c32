//===- Keras2VisionTest.cpp - A Keras 2 vision model written by tf_keras --===//
//
// vision_keras2.h5 and vision_keras2.json were written by tf_keras 2 itself
// (scripts/keras-fixtures/make_keras2_fixtures.py) for a functional model
// with BatchNormalization (moving statistics after 64 fit() steps),
// DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, PReLU, LeakyReLU, ReLU,
// ZeroPadding2D, UpSampling2D, GlobalAveragePooling2D, Concatenate and the
// six merge layers. Imported from the legacy .h5 (config, weights and
// training_config) and from the to_json text with the .h5's weights, kcc's
// predict, compiled and interpreted, must match Keras 2's
// (vision_keras2_predict.json) within 1e-5.
//
//===----------------------------------------------------------------------===//

#include "KerasTestUtil.h"

#include "frontend/training/Jit.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

using namespace kcc;
using namespace kcc::keras_test;
namespace json = llvm::json;

namespace {

keras::ImportedModel importVision(const std::string &from) {
  if (from == "h5")
    return keras::importFile(fixture("vision_keras2.h5"));
  keras::ImportedModel m = keras::importModelJson(
      readText("vision_keras2.json"), "vision_keras2.json");
  keras::loadWeightsH5File(m, fixture("vision_keras2.h5"));
  return m;
}

const json::Object &record() {
  static json::Value v = readJson("vision_keras2_predict.json");
  return *v.getAsObject();
}

TEST(Keras2Vision, ImportsEveryLayerWithTheWeightsAndTrainingConfig) {
  keras::ImportedModel m = importVision("h5");
  ASSERT_TRUE(m.model);
  EXPECT_TRUE(m.weightsLoaded);
  EXPECT_EQ(m.kerasMajorVersion, 2);
  std::set<std::string> classes;
  for (const Layer &layer : m.model->layers())
    classes.insert(layer.className());
  for (const char *cls :
       {"BatchNormalization", "DepthwiseConv2D", "SeparableConv2D",
        "Conv2DTranspose", "PReLU", "LeakyReLU", "ReLU", "ZeroPadding2D",
        "UpSampling2D", "GlobalAveragePooling2D", "Concatenate", "Add",
        "Subtract", "Multiply", "Average", "Maximum", "Minimum"})
    EXPECT_TRUE(classes.count(cls)) << cls << " not imported";
  ASSERT_TRUE(m.training.has_value());
  EXPECT_EQ(m.training->optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(m.training->loss.kind, LossKind::SparseCategoricalCrossentropy);

  // The JSON with the .h5's weights is the same model with the same values.
  keras::ImportedModel j = importVision("json");
  std::vector<Parameter> a = m.model->parameters(), b = j.model->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].value.numel(), b[i].value.numel()) << a[i].name;
    for (int64_t k = 0; k < a[i].value.numel(); ++k)
      ASSERT_EQ(a[i].value.at(k), b[i].value.at(k)) << a[i].name;
  }
}

using Param = std::tuple<std::string, ExecMode>;
class Keras2VisionPredict : public ::testing::TestWithParam<Param> {};

TEST_P(Keras2VisionPredict, MatchesKeras2) {
  const auto &[from, mode] = GetParam();
  keras::ImportedModel m = importVision(from);
  ASSERT_TRUE(m.weightsLoaded);

  // x = pixels / 255 in float32, as the generator fed Keras.
  const json::Array &pixels = *record().getArray("pixels");
  const json::Array &want = *record().getArray("predict");
  int64_t n = static_cast<int64_t>(pixels.size());
  ASSERT_EQ(static_cast<int64_t>(want.size()), n);
  NDArray x = NDArray::empty({n, 28, 28, 1}, DType::F32);
  float *px = x.data<float>();
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *pixels[r].getAsArray();
    ASSERT_EQ(row.size(), 784u);
    for (size_t i = 0; i < row.size(); ++i)
      px[r * 784 + i] = static_cast<float>(*row[i].getAsInteger()) / 255.0f;
  }

  Executable exe = jitInference(*m.model, n, mode, nullptr);
  NDArray got = exe.predict(x);
  ASSERT_EQ(got.shape(), (Shape{n, 10}));
  double worst = 0;
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *want[r].getAsArray();
    ASSERT_EQ(row.size(), 10u);
    for (int64_t c = 0; c < 10; ++c) {
      double k = *row[c].getAsNumber(), v = got.at(r * 10 + c);
      worst = std::max(worst, std::abs(v - k));
      EXPECT_LE(std::abs(v - k), 1e-5)
          << from << " row " << r << " col " << c << ": Keras 2 " << k
          << ", kcc " << v;
    }
  }
  std::printf("[ keras2 ] vision from %s (%s): worst predict error %.2e\n",
              from.c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted", worst);
}

INSTANTIATE_TEST_SUITE_P(
    Keras2VisionFixture, Keras2VisionPredict,
    ::testing::Combine(::testing::Values("h5", "json"),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

} // namespace
