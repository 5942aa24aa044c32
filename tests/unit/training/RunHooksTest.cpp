//===- RunHooksTest.cpp - evaluate()'s and predict()'s callbacks ----------===//
//
// Keras's on_test_* and on_predict_* hooks: in Keras's order, a test
// batch's end carrying the running loss and metrics (the last one the
// result), a predict batch's end its outputs, stopEvaluating and
// stopPredicting ending the run after the batch, and fit()'s validation
// calling the test hooks between the epoch's last batch and its end. The
// results with hooks are the results without them, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layers.h"
#include "frontend/training/Trainer.h"

#include <gtest/gtest.h>

#include <cstring>

using namespace kcc;

namespace {

Sequential makeClassifier() {
  return Sequential({Input({4}), Dense(8, "relu"), Dense(3, "softmax")},
                    "hooks", /*seed=*/5);
}

/// n examples of 4 features, labels from a fixed rule.
Dataset makeData(int64_t n) {
  Dataset d;
  d.x = NDArray::empty({n, 4}, DType::F32);
  d.y = NDArray::empty({n}, DType::I32);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < 4; ++j)
      d.x.data<float>()[i * 4 + j] =
          static_cast<float>(((i * 7 + j * 3) % 11) - 5) / 5.0f;
    d.y.data<int32_t>()[i] = static_cast<int32_t>(i % 3);
  }
  return d;
}

/// The first `rows` examples of `d`.
Dataset head(const Dataset &d, int64_t rows) {
  Dataset h;
  h.x = NDArray::empty({rows, 4}, DType::F32);
  h.y = NDArray::empty({rows}, DType::I32);
  std::memcpy(h.x.rawData(), d.x.rawData(), h.x.bytes());
  std::memcpy(h.y.rawData(), d.y.rawData(), h.y.bytes());
  return h;
}

TrainingConfig config(ExecMode mode) {
  TrainingConfig c;
  c.metrics = {"accuracy"};
  c.mode = mode;
  return c;
}

/// Every hook as a line, with the loss where the hook has logs; stops
/// evaluate or predict after batch `stopAfter`.
struct Recorder : Callback {
  std::vector<std::string> events;
  std::vector<Logs> testBatchLogs;
  Logs testEnd;
  std::vector<std::vector<NDArray>> predictBatches;
  int64_t stopAfter = -1;

  void onEpochEnd(int64_t e, Logs &logs) override {
    events.push_back("epoch_end " + std::to_string(e));
    epochLogs.push_back(logs);
  }
  void onBatchEnd(int64_t b, Logs &) override {
    events.push_back("batch_end " + std::to_string(b));
  }
  void onTestBegin(Logs &) override { events.push_back("test_begin"); }
  void onTestBatchBegin(int64_t b, Logs &) override {
    events.push_back("test_batch_begin " + std::to_string(b));
  }
  void onTestBatchEnd(int64_t b, Logs &logs) override {
    events.push_back("test_batch_end " + std::to_string(b));
    testBatchLogs.push_back(logs);
    if (b == stopAfter)
      trainer().stopEvaluating = true;
  }
  void onTestEnd(Logs &logs) override {
    events.push_back("test_end");
    testEnd = logs;
  }
  void onPredictBegin(Logs &) override { events.push_back("predict_begin"); }
  void onPredictBatchBegin(int64_t b, Logs &) override {
    events.push_back("predict_batch_begin " + std::to_string(b));
  }
  void onPredictBatchEnd(int64_t b,
                         const std::vector<NDArray> &outputs) override {
    events.push_back("predict_batch_end " + std::to_string(b));
    std::vector<NDArray> copies;
    for (const NDArray &o : outputs)
      copies.push_back(o.clone());
    predictBatches.push_back(copies);
    if (b == stopAfter)
      trainer().stopPredicting = true;
  }
  void onPredictEnd(Logs &) override { events.push_back("predict_end"); }

  std::vector<Logs> epochLogs;
};

class RunHooks : public ::testing::TestWithParam<ExecMode> {};

TEST_P(RunHooks, EvaluateCallsTheTestHooksWithRunningLogs) {
  Sequential model = makeClassifier();
  Trainer trainer(model, config(GetParam()), nullptr);
  Dataset data = makeData(70);
  auto rec = std::make_shared<Recorder>();
  Logs with = trainer.evaluate(data, 32, {rec});
  Logs without = trainer.evaluate(data, 32);
  EXPECT_EQ(with.at("loss").number(), without.at("loss").number());
  EXPECT_EQ(with.at("accuracy").number(), without.at("accuracy").number());

  std::vector<std::string> expected = {"test_begin",       "test_batch_begin 0",
                                       "test_batch_end 0", "test_batch_begin 1",
                                       "test_batch_end 1", "test_batch_begin 2",
                                       "test_batch_end 2", "test_end"};
  EXPECT_EQ(rec->events, expected);
  // The first batch's logs are its own loss; the last's the result.
  Logs first = trainer.evaluate(head(data, 32), 32);
  ASSERT_EQ(rec->testBatchLogs.size(), 3u);
  EXPECT_DOUBLE_EQ(rec->testBatchLogs[0].at("loss").number(),
                   first.at("loss").number());
  EXPECT_DOUBLE_EQ(rec->testBatchLogs[2].at("loss").number(),
                   with.at("loss").number());
  EXPECT_DOUBLE_EQ(rec->testEnd.at("loss").number(), with.at("loss").number());
  EXPECT_NE(rec->testBatchLogs[0].at("loss").number(),
            with.at("loss").number());
}

TEST_P(RunHooks, StopEvaluatingEndsAfterTheBatch) {
  Sequential model = makeClassifier();
  Trainer trainer(model, config(GetParam()), nullptr);
  Dataset data = makeData(70);
  auto rec = std::make_shared<Recorder>();
  rec->stopAfter = 1;
  Logs stopped = trainer.evaluate(data, 32, {rec});
  EXPECT_EQ(rec->testBatchLogs.size(), 2u);
  EXPECT_EQ(rec->events.back(), "test_end");
  Logs twoBatches = trainer.evaluate(head(data, 64), 32);
  EXPECT_DOUBLE_EQ(stopped.at("loss").number(), twoBatches.at("loss").number());
  // The next run starts afresh (Keras clears stop_evaluating).
  rec->stopAfter = -1;
  rec->testBatchLogs.clear();
  trainer.evaluate(data, 32, {rec});
  EXPECT_EQ(rec->testBatchLogs.size(), 3u);
}

TEST_P(RunHooks, PredictHandsEachBatchsOutputs) {
  Sequential model = makeClassifier();
  Trainer trainer(model, config(GetParam()), nullptr);
  Dataset data = makeData(70);
  auto rec = std::make_shared<Recorder>();
  std::vector<NDArray> with = trainer.predict({data.x}, 32, {rec});
  std::vector<NDArray> without =
      trainer.predict(std::vector<NDArray>{data.x}, 32);
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(with[0].shape(), without[0].shape());
  EXPECT_EQ(with[0].toVector(), without[0].toVector());

  std::vector<std::string> expected = {
      "predict_begin",       "predict_batch_begin 0",
      "predict_batch_end 0", "predict_batch_begin 1",
      "predict_batch_end 1", "predict_batch_begin 2",
      "predict_batch_end 2", "predict_end"};
  EXPECT_EQ(rec->events, expected);
  ASSERT_EQ(rec->predictBatches.size(), 3u);
  std::vector<double> all = without[0].toVector(), joined;
  for (auto [b, rows] : {std::pair{0, 32}, {1, 32}, {2, 6}}) {
    const NDArray &out = rec->predictBatches[b][0];
    EXPECT_EQ(out.dim(0), rows) << "batch " << b;
    std::vector<double> v = out.toVector();
    joined.insert(joined.end(), v.begin(), v.end());
  }
  EXPECT_EQ(joined, all);

  auto stop = std::make_shared<Recorder>();
  stop->stopAfter = 1;
  std::vector<NDArray> cut = trainer.predict({data.x}, 32, {stop});
  EXPECT_EQ(cut[0].dim(0), 64);
  EXPECT_EQ(cut[0].toVector(),
            std::vector<double>(all.begin(), all.begin() + 64 * 3));
  EXPECT_EQ(stop->events.back(), "predict_end");
}

TEST_P(RunHooks, FitValidatesBetweenTheLastBatchAndTheEpochsEnd) {
  Sequential model = makeClassifier();
  Trainer trainer(model, config(GetParam()), nullptr);
  Dataset train = makeData(64), val = makeData(40);
  auto rec = std::make_shared<Recorder>();
  FitOptions f;
  f.epochs = 2;
  f.batchSize = 32;
  f.verbose = 0;
  f.callbacks = {rec};
  History h = trainer.fit(train, f, &val);
  std::vector<std::string> epoch = {"batch_end 0",      "batch_end 1",
                                    "test_begin",       "test_batch_begin 0",
                                    "test_batch_end 0", "test_batch_begin 1",
                                    "test_batch_end 1", "test_end"};
  std::vector<std::string> expected;
  for (int e = 0; e < 2; ++e) {
    expected.insert(expected.end(), epoch.begin(), epoch.end());
    expected.push_back("epoch_end " + std::to_string(e));
  }
  EXPECT_EQ(rec->events, expected);
  // The test end's logs are the epoch's val_* values.
  ASSERT_EQ(rec->epochLogs.size(), 2u);
  EXPECT_EQ(rec->testEnd.at("loss").number(),
            rec->epochLogs[1].at("val_loss").number());
  EXPECT_EQ(rec->testEnd.at("accuracy").number(),
            rec->epochLogs[1].at("val_accuracy").number());
}

INSTANTIATE_TEST_SUITE_P(Modes, RunHooks,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const auto &info) {
                           return info.param == ExecMode::Compiled
                                      ? "Compiled"
                                      : "Interpreted";
                         });

} // namespace
