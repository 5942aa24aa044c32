//===- Keras2FixturesTest.cpp - Keras 2 models written by tf_keras --------===//
//
// <name>_keras2.h5 and <name>_keras2.json were written by tf_keras 2 itself
// (scripts/keras-fixtures/make_keras2_fixtures.py) after 64 fit() steps:
//
//  vision    a functional model with BatchNormalization (its moving
//            statistics), DepthwiseConv2D, SeparableConv2D, Conv2DTranspose,
//            PReLU, LeakyReLU, ReLU, ZeroPadding2D, UpSampling2D,
//            GlobalAveragePooling2D, Concatenate and the six merge layers;
//  sequence  a functional model on int32 token ids with Embedding,
//            ZeroPadding1D, Conv1D (causal with dilation, same with strides,
//            valid with dilation), MaxPooling1D, AveragePooling1D,
//            UpSampling1D, GlobalMaxPooling1D, Dense on the rank-3
//            embeddings, GRU (return_sequences, reset_after),
//            GlobalAveragePooling1D, LSTM and Concatenate;
//  mixed     a CNN with BatchNormalization under the mixed_bfloat16 policy
//            (Keras 2 Policy objects; a float32 softmax last).
//
// Each imports from the legacy .h5 (config, weights and training_config)
// and from the to_json text with the .h5's weights, to the same values; and
// kcc's predict, compiled and interpreted, must match Keras 2's
// (<name>_keras2_predict.json) within 1e-5 (mixed: within 2e-2, bfloat16
// rounding, with each layer's policy as Keras 2 saved it).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/keras/KerasTestUtil.h"

#include "frontend/training/Jit.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

using namespace kcc;
using namespace kcc::keras_test;
namespace json = llvm::json;

namespace {

/// x = pixels / 255 in float32, as the generator fed Keras.
NDArray visionInput(const json::Object &record) {
  const json::Array &pixels = *record.getArray("pixels");
  int64_t n = static_cast<int64_t>(pixels.size());
  NDArray x = NDArray::empty({n, 28, 28, 1}, DType::F32);
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *pixels[r].getAsArray();
    EXPECT_EQ(row.size(), 784u);
    for (size_t i = 0; i < row.size() && i < 784; ++i)
      x.data<float>()[r * 784 + i] =
          static_cast<float>(*row[i].getAsInteger()) / 255.0f;
  }
  return x;
}

/// The int32 token ids the generator fed Keras.
NDArray sequenceInput(const json::Object &record) {
  constexpr int64_t kSteps = 48;
  const json::Array &ids = *record.getArray("ids");
  int64_t n = static_cast<int64_t>(ids.size());
  NDArray x = NDArray::empty({n, kSteps}, DType::I32);
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *ids[r].getAsArray();
    EXPECT_EQ(static_cast<int64_t>(row.size()), kSteps);
    for (int64_t i = 0; i < kSteps && i < static_cast<int64_t>(row.size()); ++i)
      x.data<int32_t>()[r * kSteps + i] =
          static_cast<int32_t>(*row[i].getAsInteger());
  }
  return x;
}

struct Keras2Fixture {
  std::string name;
  std::vector<std::string> classes; ///< layer classes the model must hold
  int64_t outputs;                  ///< predict's width
  NDArray (*input)(const json::Object &record);
  double tolerance; ///< of predict against Keras 2's
};

const Keras2Fixture kFixtures[] = {
    {"vision",
     {"BatchNormalization", "DepthwiseConv2D", "SeparableConv2D",
      "Conv2DTranspose", "PReLU", "LeakyReLU", "ReLU", "ZeroPadding2D",
      "UpSampling2D", "GlobalAveragePooling2D", "Concatenate", "Add",
      "Subtract", "Multiply", "Average", "Maximum", "Minimum"},
     10,
     visionInput,
     1e-5},
    {"sequence",
     {"Embedding", "ZeroPadding1D", "Conv1D", "MaxPooling1D", "UpSampling1D",
      "AveragePooling1D", "GlobalMaxPooling1D", "Dense", "GRU",
      "GlobalAveragePooling1D", "LSTM", "Concatenate"},
     3,
     sequenceInput,
     1e-5},
    {"mixed",
     {"Conv2D", "BatchNormalization", "ReLU", "MaxPooling2D", "Flatten",
      "Dense", "Activation"},
     10,
     visionInput,
     2e-2},
};

keras::ImportedModel importFixture(const Keras2Fixture &f,
                                   const std::string &from) {
  std::string stem = f.name + "_keras2";
  if (from == "h5")
    return keras::importFile(fixture(stem + ".h5"));
  keras::ImportedModel m =
      keras::importModelJson(readText(stem + ".json"), stem + ".json");
  keras::loadWeightsH5File(m, fixture(stem + ".h5"));
  return m;
}

const json::Object &record(const Keras2Fixture &f) {
  static std::map<std::string, json::Value> cache;
  auto it = cache.find(f.name);
  if (it == cache.end())
    it = cache.emplace(f.name, readJson(f.name + "_keras2_predict.json")).first;
  return *it->second.getAsObject();
}

class Keras2Import : public ::testing::TestWithParam<size_t> {};

TEST_P(Keras2Import, EveryLayerWithTheWeightsAndTrainingConfig) {
  const Keras2Fixture &f = kFixtures[GetParam()];
  keras::ImportedModel m = importFixture(f, "h5");
  ASSERT_TRUE(m.model);
  EXPECT_TRUE(m.weightsLoaded);
  EXPECT_EQ(m.kerasMajorVersion, 2);
  std::set<std::string> classes;
  for (const Layer &layer : m.model->layers())
    classes.insert(layer.className());
  for (const std::string &cls : f.classes)
    EXPECT_TRUE(classes.count(cls)) << cls << " not imported";
  // Keras 2's dtype policies (mixed fixture): each layer's as saved.
  if (const json::Object *policies = record(f).getObject("policies"))
    for (const Layer &layer : m.model->layers())
      if (std::optional<llvm::StringRef> p = policies->getString(layer.name()))
        EXPECT_EQ(layer.impl()->dtypePolicy(), p->str()) << layer.name();
  ASSERT_TRUE(m.training.has_value());
  EXPECT_EQ(m.training->optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(m.training->loss.kind, LossKind::SparseCategoricalCrossentropy);

  // The JSON with the .h5's weights is the same model with the same values.
  keras::ImportedModel j = importFixture(f, "json");
  std::vector<Parameter> a = m.model->parameters(), b = j.model->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name, b[i].name);
    ASSERT_EQ(a[i].value.numel(), b[i].value.numel()) << a[i].name;
    for (int64_t k = 0; k < a[i].value.numel(); ++k)
      ASSERT_EQ(a[i].value.at(k), b[i].value.at(k)) << a[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(Keras2Fixtures, Keras2Import,
                         ::testing::Range<size_t>(0, std::size(kFixtures)),
                         [](const auto &info) {
                           return kFixtures[info.param].name;
                         });

using Param = std::tuple<size_t, std::string, ExecMode>;
class Keras2Predict : public ::testing::TestWithParam<Param> {};

TEST_P(Keras2Predict, MatchesKeras2) {
  const auto &[index, from, mode] = GetParam();
  const Keras2Fixture &f = kFixtures[index];
  keras::ImportedModel m = importFixture(f, from);
  ASSERT_TRUE(m.weightsLoaded);
  NDArray x = f.input(record(f));
  const json::Array &want = *record(f).getArray("predict");
  int64_t n = x.dim(0), k = f.outputs;
  ASSERT_EQ(static_cast<int64_t>(want.size()), n);

  Executable exe = jitInference(*m.model, n, mode, nullptr);
  NDArray got = exe.predict(x);
  ASSERT_EQ(got.shape(), (Shape{n, k}));
  double worst = 0;
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *want[r].getAsArray();
    ASSERT_EQ(static_cast<int64_t>(row.size()), k);
    for (int64_t c = 0; c < k; ++c) {
      double keras = *row[c].getAsNumber(), v = got.at(r * k + c);
      worst = std::max(worst, std::abs(v - keras));
      EXPECT_LE(std::abs(v - keras), f.tolerance)
          << f.name << " from " << from << " row " << r << " col " << c
          << ": Keras 2 " << keras << ", kcc " << v;
    }
  }
  std::printf("[ keras2 ] %s from %s (%s): worst predict error %.2e\n",
              f.name.c_str(), from.c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted", worst);
}

INSTANTIATE_TEST_SUITE_P(
    Keras2Fixtures, Keras2Predict,
    ::testing::Combine(::testing::Range<size_t>(0, std::size(kFixtures)),
                       ::testing::Values("h5", "json"),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return kFixtures[std::get<0>(info.param)].name + "_" +
             std::get<1>(info.param) +
             (std::get<2>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

} // namespace
