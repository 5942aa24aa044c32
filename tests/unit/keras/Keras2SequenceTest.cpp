//===- Keras2SequenceTest.cpp - A Keras 2 sequence model written by tf_keras ===//
//
// sequence_keras2.h5 and sequence_keras2.json were written by tf_keras 2
// itself (scripts/keras-fixtures/make_keras2_fixtures.py --only sequence)
// for a functional model on int32 token ids with Embedding, ZeroPadding1D,
// Conv1D (causal with dilation, same with strides, valid with dilation),
// MaxPooling1D, AveragePooling1D, UpSampling1D, GlobalMaxPooling1D, Dense on
// the rank-3 embeddings, GRU (return_sequences, reset_after),
// GlobalAveragePooling1D, LSTM and Concatenate, trained 64 Adam steps by
// fit(). Imported from the legacy .h5 (config, weights and training_config)
// and from the to_json text with the .h5's weights, kcc's predict, compiled
// and interpreted, must match Keras 2's (sequence_keras2_predict.json)
// within 1e-5.
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

keras::ImportedModel importSequence(const std::string &from) {
  if (from == "h5")
    return keras::importFile(fixture("sequence_keras2.h5"));
  keras::ImportedModel m = keras::importModelJson(
      readText("sequence_keras2.json"), "sequence_keras2.json");
  keras::loadWeightsH5File(m, fixture("sequence_keras2.h5"));
  return m;
}

const json::Object &record() {
  static json::Value v = readJson("sequence_keras2_predict.json");
  return *v.getAsObject();
}

TEST(Keras2Sequence, ImportsEveryLayerWithTheWeightsAndTrainingConfig) {
  keras::ImportedModel m = importSequence("h5");
  ASSERT_TRUE(m.model);
  EXPECT_TRUE(m.weightsLoaded);
  EXPECT_EQ(m.kerasMajorVersion, 2);
  std::set<std::string> classes;
  for (const Layer &layer : m.model->layers())
    classes.insert(layer.className());
  for (const char *cls :
       {"Embedding", "ZeroPadding1D", "Conv1D", "MaxPooling1D",
        "UpSampling1D", "AveragePooling1D", "GlobalMaxPooling1D", "Dense",
        "GRU", "GlobalAveragePooling1D", "LSTM", "Concatenate"})
    EXPECT_TRUE(classes.count(cls)) << cls << " not imported";
  ASSERT_TRUE(m.training.has_value());
  EXPECT_EQ(m.training->optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(m.training->loss.kind, LossKind::SparseCategoricalCrossentropy);

  // The JSON with the .h5's weights is the same model with the same values.
  keras::ImportedModel j = importSequence("json");
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
class Keras2SequencePredict : public ::testing::TestWithParam<Param> {};

TEST_P(Keras2SequencePredict, MatchesKeras2) {
  const auto &[from, mode] = GetParam();
  keras::ImportedModel m = importSequence(from);
  ASSERT_TRUE(m.weightsLoaded);

  // The int32 token ids the generator fed Keras.
  const json::Array &ids = *record().getArray("ids");
  const json::Array &want = *record().getArray("predict");
  int64_t n = static_cast<int64_t>(ids.size());
  ASSERT_EQ(static_cast<int64_t>(want.size()), n);
  constexpr int64_t kSteps = 48, kClasses = 3;
  NDArray x = NDArray::empty({n, kSteps}, DType::I32);
  int32_t *px = x.data<int32_t>();
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *ids[r].getAsArray();
    ASSERT_EQ(static_cast<int64_t>(row.size()), kSteps);
    for (int64_t i = 0; i < kSteps; ++i)
      px[r * kSteps + i] = static_cast<int32_t>(*row[i].getAsInteger());
  }

  Executable exe = jitInference(*m.model, n, mode, nullptr);
  NDArray got = exe.predict(x);
  ASSERT_EQ(got.shape(), (Shape{n, kClasses}));
  double worst = 0;
  for (int64_t r = 0; r < n; ++r) {
    const json::Array &row = *want[r].getAsArray();
    ASSERT_EQ(static_cast<int64_t>(row.size()), kClasses);
    for (int64_t c = 0; c < kClasses; ++c) {
      double k = *row[c].getAsNumber(), v = got.at(r * kClasses + c);
      worst = std::max(worst, std::abs(v - k));
      EXPECT_LE(std::abs(v - k), 1e-5)
          << from << " row " << r << " col " << c << ": Keras 2 " << k
          << ", kcc " << v;
    }
  }
  std::printf("[ keras2 ] sequence from %s (%s): worst predict error %.2e\n",
              from.c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted", worst);
}

INSTANTIATE_TEST_SUITE_P(
    Keras2SequenceFixture, Keras2SequencePredict,
    ::testing::Combine(::testing::Values("h5", "json"),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

} // namespace
