//===- RecurrentParityTest.cpp - LSTM, GRU, SimpleRNN train as Keras ------===//
//
// The fixtures of scripts/keras-fixtures/make_recurrent_fixtures.py, written
// by Keras 3 itself on int32 token ids of 40 to 100 steps: an LSTM
// classifier, a GRU (reset_after, sparse labels from logits), a GRU without
// reset_after returning sequences, two stacked SimpleRNNs (the first going
// backwards), a Bidirectional LSTM under a Bidirectional GRU (concat and
// sum merges), and an LSTM's return_state outputs concatenated. From
// Keras's initial weights, on Keras's batch, kcc must reproduce, compiled
// (an scf.for over time) and interpreted, Keras's predict before and after
// 5 Adam steps (1e-5) and the loss of each step (1e-4 relative).
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

const json::Object &recurrentJson() {
  static const json::Value value =
      e2e::readFixtureJson("recurrent/recurrent.json");
  return *value.getAsObject();
}

using Param = std::tuple<std::string, ExecMode>;

class RecurrentParity : public ::testing::TestWithParam<Param> {};

TEST_P(RecurrentParity, StepsAndPredictMatchKeras) {
  const auto &[name, mode] = GetParam();
  ASSERT_EQ(*recurrentJson().getInteger("steps"), 5);
  const json::Object &record = *recurrentJson().getObject(name);

  keras::ImportedModel imported = keras::importKerasArchive(
      e2e::kerasFixture("recurrent/" + name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);
  std::map<std::string, NDArray> batch =
      readNpz(e2e::kerasFixture("recurrent/" + name + ".npz"));
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
    KerasRecurrentFixtures, RecurrentParity,
    ::testing::Combine(::testing::Values("rnn_lstm", "rnn_gru",
                                         "rnn_gru_v1", "rnn_simple",
                                         "rnn_bilstm", "rnn_state"),
                       ::testing::Values(ExecMode::Compiled,
                                         ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

} // namespace
