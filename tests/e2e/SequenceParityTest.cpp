//===- SequenceParityTest.cpp - Sequence and recurrent models train as Keras
//===//
//
// The fixtures of scripts/keras-fixtures/make_sequence_fixtures.py and
// make_recurrent_fixtures.py, written by Keras 3 itself on int32 token ids.
// sequence/: a bag of embeddings (Embedding, Dense on the rank-3
// embeddings, GlobalAveragePooling1D, binary crossentropy on a sigmoid), a
// 1-D convnet (Embedding, ZeroPadding1D, causal dilated Conv1D,
// MaxPooling1D, strided same Conv1D, UpSampling1D, AveragePooling1D,
// GlobalMaxPooling1D, sparse categorical crossentropy from logits), a
// transformer block (Embedding, causal MultiHeadAttention, residual Adds,
// LayerNormalization, a Dense feed-forward on rank 3,
// GlobalAveragePooling1D, binary crossentropy) and a cross-attention
// (query, value and a key= keyword argument of their own, no biases,
// output_shape), and ids encoded by CategoryEncoding (multi_hot, count,
// one_hot) and bucketed by Discretization (int buckets into an Embedding,
// count). einsum/: three stand-alone EinsumDenses ("abc,cd->abd"
// with bias_axes "d", "abc,cde->abde" with a bias on "e" alone,
// "abcd,cde->abe"). recurrent/, over 40 to 100 steps: an LSTM classifier, a
// GRU (reset_after, sparse labels from logits), a GRU without reset_after
// returning sequences, two stacked SimpleRNNs (the first going backwards),
// a Bidirectional LSTM under a Bidirectional GRU (concat and sum merges),
// an LSTM's return_state outputs concatenated, a GRU's return_state with
// return_sequences, a backwards SimpleRNN's return_state, a Bidirectional
// GRU merged by "mul" and a Bidirectional SimpleRNN under a Bidirectional
// LSTM, both merged by "ave", RNN(LSTMCell) under an RNN of a backwards
// StackedRNNCells (GRUCell, SimpleRNNCell), and a masked stack's
// return_state beside an RNN's zero_output_for_mask last output. masks/
// (make_mask_fixtures.py), sequences padded at either end and masked by
// Embedding(mask_zero=True) or Masking: an LSTM, two GRUs (sequences, then
// backwards), two Bidirectionals, two SimpleRNNs after Masking, a masked
// GlobalAveragePooling1D behind Dense and Dropout, a transformer block
// (MultiHeadAttention's attention mask from the masks, Add, LayerNormalization)
// and a per-step tagger whose loss counts the real steps only. From Keras's
// initial weights, on Keras's batch, kcc must reproduce, compiled and
// interpreted, Keras's predict before and after 5 Adam steps (1e-5) and the
// loss of each step (1e-4 relative).
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Trainer.h"
#include "runtime/data/Npz.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

/// DIR/DIR.json, the records of the fixtures in DIR.
const json::Object &suiteJson(const std::string &dir) {
  static std::map<std::string, json::Value> suites;
  auto it = suites.find(dir);
  if (it == suites.end())
    it = suites.emplace(dir, e2e::readFixtureJson(dir + "/" + dir + ".json"))
             .first;
  return *it->second.getAsObject();
}

/// (fixture directory, model name, mode).
using Param = std::tuple<std::string, std::string, ExecMode>;

class SequenceParity : public ::testing::TestWithParam<Param> {};

TEST_P(SequenceParity, StepsAndPredictMatchKeras) {
  const auto &[dir, name, mode] = GetParam();
  ASSERT_EQ(*suiteJson(dir).getInteger("steps"), 5);
  const json::Object &record = *suiteJson(dir).getObject(name);

  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture(dir + "/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  std::map<std::string, NDArray> batch =
      readNpz(e2e::kerasFixture(dir + "/" + name + ".npz"));
  const NDArray &x = batch.at("x"), &y = batch.at("y");
  // Token ids, or (mask_simple) float features that Masking reads.
  ASSERT_TRUE(x.dtype() == DType::I32 || name == "mask_simple");

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

/// The masked tagger's accuracy: Keras weighs it by the output's mask (the
/// fraction of the real steps predicted right), step by step as
/// train_on_batch logs it.
TEST(MaskedMetrics, TaggerAccuracyCountsTheRealStepsAsKeras) {
  const json::Object &record = *suiteJson("masks").getObject("mask_tagger");
  const json::Array *keras = record.getArray("step_metrics");
  ASSERT_NE(keras, nullptr);
  std::map<std::string, NDArray> batch =
      readNpz(e2e::kerasFixture("masks/mask_tagger.npz"));
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    keras::ImportedModel imported =
        keras::importKerasArchive(e2e::kerasFixture("masks/mask_tagger.keras"));
    TrainingConfig config = e2e::kerasAdamConfig(record, mode);
    config.metrics = {"sparse_categorical_accuracy"};
    Executable exe = e2e::jitQuietly(*imported.model, config);
    for (size_t s = 0; s < keras->size(); ++s) {
      StepResult r = exe.step(batch.at("x"), batch.at("y"));
      double want =
          *(*keras)[s].getAsObject()->getNumber("sparse_categorical_accuracy");
      ASSERT_EQ(r.metrics.size(), 1u);
      // A fraction of the real steps: Keras's float32 count and kcc's agree
      // to rounding.
      EXPECT_NEAR(r.metrics[0], want, 1e-6) << "step " << s;
    }
  }
}

/// evaluate() on a masked output, in batches whose numbers of real steps
/// differ: each batch's masked loss averaged by the batches' sizes, and the
/// accuracy over every real step, as Keras's evaluate().
TEST(MaskedMetrics, EvaluateWeighsTheRealStepsAsKeras) {
  for (std::string name : {"mask_tagger", "mask_timedistributed"}) {
    const json::Object &record = *suiteJson("masks").getObject(name);
    const json::Object *keras = record.getObject("evaluate");
    ASSERT_NE(keras, nullptr) << name;
    std::map<std::string, NDArray> batch =
        readNpz(e2e::kerasFixture("masks/" + name + ".npz"));
    for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
      keras::ImportedModel imported = keras::importKerasArchive(
          e2e::kerasFixture("masks/" + name + ".keras"));
      TrainingConfig config = e2e::kerasAdamConfig(record, mode);
      config.metrics = {"sparse_categorical_accuracy"};
      Trainer trainer(*imported.model, config, /*log=*/nullptr);
      Logs logs = trainer.evaluate(Dataset{batch.at("x"), batch.at("y")},
                                   *keras->getInteger("batch_size"));
      double loss = logs.at("loss"),
             accuracy = logs.at("sparse_categorical_accuracy");
      std::printf("[ keras ] %s evaluate (%s): loss %.7f (Keras %.7f), "
                  "accuracy %.7f (Keras %.7f)\n",
                  name.c_str(), execModeName(mode), loss,
                  *keras->getNumber("loss"), accuracy,
                  *keras->getNumber("sparse_categorical_accuracy"));
      EXPECT_NEAR(loss, *keras->getNumber("loss"), 1e-5) << name;
      EXPECT_NEAR(accuracy, *keras->getNumber("sparse_categorical_accuracy"),
                  1e-6)
          << name;
    }
  }
}

/// A metric kcc does not weigh by a mask is refused on a masked output,
/// never reported over the padded steps.
TEST(MaskedMetrics, UnweighableMetricIsRefusedByName) {
  const json::Object &record = *suiteJson("masks").getObject("mask_tagger");
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture("masks/mask_tagger.keras"));
  TrainingConfig config = e2e::kerasAdamConfig(record, ExecMode::Interpreted);
  config.metrics = {"sparse_top_k_categorical_accuracy"};
  try {
    e2e::jitQuietly(*imported.model, config);
    ADD_FAILURE() << "a masked output took sparse_top_k_categorical_accuracy";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("sparse_top_k_categorical_accuracy"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("mask"), std::string::npos) << msg;
  }
}

std::string paramName(const ::testing::TestParamInfo<Param> &info) {
  return std::get<1>(info.param) +
         (std::get<2>(info.param) == ExecMode::Compiled ? "_compiled"
                                                        : "_interpreted");
}

const auto kModes =
    ::testing::Values(ExecMode::Compiled, ExecMode::Interpreted);

INSTANTIATE_TEST_SUITE_P(
    KerasSequenceFixtures, SequenceParity,
    ::testing::Combine(::testing::Values("sequence"),
                       ::testing::Values("seq_bag", "seq_conv",
                                         "seq_transformer", "seq_cross",
                                         "seq_categorical"),
                       kModes),
    paramName);

INSTANTIATE_TEST_SUITE_P(KerasEinsumFixtures, SequenceParity,
                         ::testing::Combine(::testing::Values("einsum"),
                                            ::testing::Values("seq_einsum"),
                                            kModes),
                         paramName);

INSTANTIATE_TEST_SUITE_P(
    KerasRecurrentFixtures, SequenceParity,
    ::testing::Combine(::testing::Values("recurrent"),
                       ::testing::Values("rnn_lstm", "rnn_gru", "rnn_gru_v1",
                                         "rnn_simple", "rnn_bilstm",
                                         "rnn_state", "rnn_gru_state",
                                         "rnn_simple_state", "rnn_bimul",
                                         "rnn_biave", "rnn_cell",
                                         "rnn_cell_state"),
                       kModes),
    paramName);

INSTANTIATE_TEST_SUITE_P(
    KerasMaskFixtures, SequenceParity,
    ::testing::Combine(::testing::Values("masks"),
                       ::testing::Values("mask_lstm", "mask_gru", "mask_bidir",
                                         "mask_simple", "mask_gap",
                                         "mask_transformer", "mask_tagger",
                                         "mask_timedistributed", "mask_concat",
                                         "mask_batchnorm", "mask_attention",
                                         "mask_additive"),
                       kModes),
    paramName);

} // namespace
