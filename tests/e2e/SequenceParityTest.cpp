//===- SequenceParityTest.cpp - Embedding and 1-D layers train as Keras ---===//
//
// The fixtures of scripts/keras-fixtures/make_sequence_fixtures.py, written
// by Keras 3 itself: a bag of embeddings (Embedding, Dense on the rank-3
// embeddings, GlobalAveragePooling1D, binary crossentropy on a sigmoid) and
// a 1-D convnet (Embedding, ZeroPadding1D, causal dilated Conv1D,
// MaxPooling1D, strided same Conv1D, UpSampling1D, AveragePooling1D,
// GlobalMaxPooling1D, sparse categorical crossentropy from logits) and a
// transformer block (Embedding, causal MultiHeadAttention, residual Adds,
// LayerNormalization, a Dense feed-forward on rank 3, GlobalAveragePooling1D,
// binary crossentropy) and a cross-attention (query, value and a key=
// keyword argument of their own, no biases, output_shape), on int32 token
// ids. From Keras's initial weights, on Keras's batch, kcc must
// reproduce, compiled and interpreted, Keras's predict before and after 5
// Adam steps (1e-5) and the loss of each step (1e-4 relative).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &sequenceJson() {
  static const json::Value value =
      e2e::readFixtureJson("sequence/sequence.json");
  return *value.getAsObject();
}

using Param = std::tuple<std::string, ExecMode>;

class SequenceParity : public ::testing::TestWithParam<Param> {};

TEST_P(SequenceParity, StepsAndPredictMatchKeras) {
  const auto &[name, mode] = GetParam();
  ASSERT_EQ(*sequenceJson().getInteger("steps"), 5);
  const json::Object &record = *sequenceJson().getObject(name);

  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("sequence/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  std::map<std::string, NDArray> batch =
      readNpz(e2e::kerasFixture("sequence/" + name + ".npz"));
  const NDArray &x = batch.at("x"), &y = batch.at("y");
  ASSERT_EQ(x.dtype(), DType::I32);

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
    KerasSequenceFixtures, SequenceParity,
    ::testing::Combine(::testing::Values("seq_bag", "seq_conv",
                                                         "seq_transformer",
                                                         "seq_cross"),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

} // namespace
