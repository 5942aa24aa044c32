//===- FitTest.cpp - Trainer::fit: batches, validation, shuffling, CSV ----===//
//
// A small softmax classifier on separable synthetic data, so every case
// runs in well under a second: the partial last batch is trained (steps
// per epoch = ceil(N / batch)), the validation loss is what evaluate()
// computes on the same data and evaluate()'s loss is the step's own loss,
// shuffling is a function of (seed, epoch), CSVLogger writes Keras's
// columns, sample weights are refused rather than ignored, and a user's
// own DataSource (a Keras Sequence) trains through background workers.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/ErrorOf.h"

#include "frontend/Layers.h"
#include "frontend/training/Trainer.h"
#include "runtime/Error.h"

#include "llvm/ADT/STLExtras.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

Sequential makeClassifier() {
  return Sequential({Input({4}), Dense(8, "relu"), Dense(3, "softmax")}, "tiny",
                    /*seed=*/3);
}

/// Labels from a fixed linear rule, so the data can be learned.
Dataset makeData(int64_t n, uint64_t seed) {
  Dataset d;
  d.x = NDArray::empty({n, 4}, DType::F32);
  d.y = NDArray::empty({n}, DType::I32);
  uint64_t state = seed * 2654435761u + 1;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / 9007199254740992.0 * 2 - 1;
  };
  for (int64_t i = 0; i < n; ++i) {
    double f[4];
    for (int j = 0; j < 4; ++j)
      d.x.data<float>()[i * 4 + j] = f[j] = next();
    double s0 = f[0] + f[1], s1 = f[2] - f[0], s2 = f[3] - f[1];
    d.y.data<int32_t>()[i] = s0 > s1 ? (s0 > s2 ? 0 : 2) : (s1 > s2 ? 1 : 2);
  }
  return d;
}

TrainingConfig config(ExecMode mode = ExecMode::Compiled) {
  TrainingConfig c;
  c.metrics = {"accuracy"};
  c.mode = mode;
  c.optimizer.learningRate = 0.01;
  return c;
}

FitOptions quiet(int64_t epochs, int64_t batch) {
  FitOptions f;
  f.epochs = epochs;
  f.batchSize = batch;
  f.verbose = 0;
  return f;
}

bool sameWeights(const std::vector<NDArray> &a, const std::vector<NDArray> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].toVector() != b[i].toVector())
      return false;
  return true;
}

TEST(Fit, TrainsThePartialLastBatch) {
  Dataset data = makeData(100, 1);
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    Sequential model = makeClassifier();
    Trainer trainer(model, config(mode), nullptr);
    History h = trainer.fit(data, quiet(2, 32));
    ASSERT_EQ(h.size(), 2u);
    // ceil(100 / 32) = 4 steps an epoch: 32, 32, 32 and 4 examples.
    EXPECT_EQ(h.epochs[0].steps, 4);
    EXPECT_EQ(trainer.iterations(), 8);
    EXPECT_EQ(h.epoch, (std::vector<int64_t>{0, 1}));
    ASSERT_EQ(h.history.at("loss").size(), 2u);
    EXPECT_LT(h.history.at("loss")[1], h.history.at("loss")[0]);
  }
}

TEST(Fit, PartialBatchMatchesTrainOnBatchByHand) {
  // fit() over 40 examples at batch 32 = train_on_batch(first 32) then
  // train_on_batch(last 8), with one optimizer state throughout.
  Dataset data = makeData(40, 2);
  Sequential a = makeClassifier(), b = makeClassifier();
  Trainer ta(a, config(), nullptr), tb(b, config(), nullptr);
  FitOptions f = quiet(1, 32);
  f.shuffle = false;
  History h = ta.fit(data, f);
  NDArray x0 = NDArray::empty({32, 4}, DType::F32),
          x1 = NDArray::empty({8, 4}, DType::F32);
  NDArray y0 = NDArray::empty({32}, DType::I32),
          y1 = NDArray::empty({8}, DType::I32);
  std::memcpy(x0.rawData(), data.x.rawData(), x0.bytes());
  std::memcpy(x1.rawData(), data.x.data<float>() + 32 * 4, x1.bytes());
  std::memcpy(y0.rawData(), data.y.rawData(), y0.bytes());
  std::memcpy(y1.rawData(), data.y.data<int32_t>() + 32, y1.bytes());
  StepResult r0 = tb.trainOnBatch(x0, y0), r1 = tb.trainOnBatch(x1, y1);
  EXPECT_TRUE(sameWeights(ta.getWeights(), tb.getWeights()));
  EXPECT_EQ(tb.iterations(), 2);
  // Keras weighs each batch's mean loss by its examples.
  EXPECT_NEAR(h.history.at("loss")[0], (32 * r0.loss + 8 * r1.loss) / 40, 1e-6);
}

TEST(Fit, ValidationLossIsEvaluateOnTheSameData) {
  Dataset train = makeData(256, 3), val = makeData(70, 4);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  History h = trainer.fit(train, quiet(2, 32), &val);
  Logs logs = trainer.evaluate(val, 32);
  EXPECT_DOUBLE_EQ(h.history.at("val_loss").back(), logs.at("loss"));
  EXPECT_DOUBLE_EQ(h.history.at("val_accuracy").back(), logs.at("accuracy"));
  // Another batch size splits the examples differently, same means.
  Logs other = trainer.evaluate(val, 500);
  EXPECT_NEAR(other.at("loss"), logs.at("loss"), 1e-9);
  EXPECT_DOUBLE_EQ(other.at("accuracy"), logs.at("accuracy"));
}

TEST(Fit, EvaluateLossEqualsTheStepsOwnLoss) {
  // The step reports the loss of the weights it starts from: evaluate()
  // on that batch, from the host formulas, must agree.
  Dataset batch = makeData(32, 5);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  Logs before = trainer.evaluate(batch, 32);
  StepResult r = trainer.trainOnBatch(batch.x, batch.y);
  EXPECT_NEAR(before.at("loss"), r.loss, 1e-5);
  EXPECT_NEAR(before.at("accuracy"), r.metrics[0], 1e-6);
}

TEST(Fit, ValidationSplitTakesTheTailBeforeShuffling) {
  Dataset data = makeData(100, 6);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  FitOptions f = quiet(1, 16);
  f.validationSplit = 0.25;
  History h = trainer.fit(data, f);
  // 75 train examples: ceil(75 / 16) = 5 steps.
  EXPECT_EQ(h.epochs[0].steps, 5);
  Dataset tail;
  tail.x = NDArray::empty({25, 4}, DType::F32);
  tail.y = NDArray::empty({25}, DType::I32);
  std::memcpy(tail.x.rawData(), data.x.data<float>() + 75 * 4, tail.x.bytes());
  std::memcpy(tail.y.rawData(), data.y.data<int32_t>() + 75, tail.y.bytes());
  EXPECT_DOUBLE_EQ(h.history.at("val_loss")[0],
                   trainer.evaluate(tail, 16).at("loss"));
}

TEST(Fit, ShuffleIsAFunctionOfSeedAndEpoch) {
  EXPECT_EQ(epochOrder(1000, 7, 3), epochOrder(1000, 7, 3));
  EXPECT_NE(epochOrder(1000, 7, 3), epochOrder(1000, 7, 4));
  EXPECT_NE(epochOrder(1000, 7, 3), epochOrder(1000, 8, 3));
  std::vector<int64_t> sorted = epochOrder(1000, 7, 3);
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 1000; ++i)
    ASSERT_EQ(sorted[i], i); // a permutation: each example once

  Dataset data = makeData(200, 7);
  auto train = [&](uint64_t seed, bool shuffle) {
    Sequential model = makeClassifier();
    Trainer trainer(model, config(), nullptr);
    FitOptions f = quiet(2, 32);
    f.seed = seed;
    f.shuffle = shuffle;
    trainer.fit(data, f);
    return trainer.getWeights();
  };
  EXPECT_TRUE(sameWeights(train(11, true), train(11, true)));
  EXPECT_FALSE(sameWeights(train(11, true), train(12, true)));
  EXPECT_FALSE(sameWeights(train(11, true), train(11, false)));

  // A run resumed at epoch 1 sees epoch 1's order.
  ArrayDataSource source(ExampleArray::fromNDArray(data.x, "x"),
                         ExampleArray::fromNDArray(data.y, "y"), 32, DType::F32,
                         DType::I32);
  source.setShuffle(true, 11);
  source.onEpochBegin(1);
  EXPECT_EQ(source.order(), epochOrder(200, 11, 1));
}

TEST(Fit, InitialEpochResumesWithThatEpochsOrder) {
  Dataset data = makeData(96, 12);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  FitOptions f = quiet(3, 32);
  f.initialEpoch = 1;
  History h = trainer.fit(data, f);
  EXPECT_EQ(h.epoch, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(trainer.iterations(), 6);
}

TEST(Fit, CsvLoggerWritesKerasColumns) {
  std::string path = ::testing::TempDir() + "/fit-log.csv";
  std::remove(path.c_str());
  Dataset train = makeData(64, 8), val = makeData(32, 9);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  FitOptions f = quiet(3, 32);
  f.callbacks = {std::make_shared<CSVLogger>(path)};
  History h = trainer.fit(train, f, &val);

  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> lines;
  std::string all = text.str();
  for (size_t start = 0; start < all.size();) {
    size_t end = all.find("\r\n", start);
    ASSERT_NE(end, std::string::npos) << "rows end in \\r\\n";
    lines.push_back(all.substr(start, end - start));
    start = end + 2;
  }
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "epoch,accuracy,loss,val_accuracy,val_loss");
  for (int e = 0; e < 3; ++e)
    EXPECT_EQ(lines[e + 1],
              std::to_string(e) + "," +
                  pythonFloatRepr(h.history.at("accuracy")[e]) + "," +
                  pythonFloatRepr(h.history.at("loss")[e]) + "," +
                  pythonFloatRepr(h.history.at("val_accuracy")[e]) + "," +
                  pythonFloatRepr(h.history.at("val_loss")[e]));

  // append: no second header, rows continue.
  Trainer again(model, config(), nullptr);
  FitOptions g = quiet(1, 32);
  g.callbacks = {std::make_shared<CSVLogger>(path, ',', /*append=*/true)};
  again.fit(train, g, &val);
  std::ifstream in2(path, std::ios::binary);
  std::string line;
  int headers = 0, rows = 0;
  while (std::getline(in2, line))
    (line.rfind("epoch,", 0) == 0 ? headers : rows)++;
  EXPECT_EQ(headers, 1);
  EXPECT_EQ(rows, 4);
}

TEST(Fit, CallbacksStopTrainingAndChangeTheLearningRate) {
  struct StopAfterTwoBatches : Callback {
    int batches = 0;
    void onBatchEnd(int64_t batch, Logs &) override {
      if (++batches == 2) {
        trainer().stopTraining = true;
        trainer().setLearningRate(0.5);
      }
    }
  };
  Dataset data = makeData(128, 10);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  auto stop = std::make_shared<StopAfterTwoBatches>();
  FitOptions f = quiet(5, 16);
  f.callbacks = {stop};
  History h = trainer.fit(data, f);
  EXPECT_EQ(h.size(), 1u);
  EXPECT_EQ(h.epochs[0].steps, 2);
  EXPECT_EQ(trainer.iterations(), 2);
  EXPECT_DOUBLE_EQ(trainer.learningRate(), 0.5);
  EXPECT_DOUBLE_EQ(trainer.executable()->learningRate(), 0.5);
}

TEST(Fit, AppliesSampleWeights) {
  Dataset data = makeData(64, 11);
  Sequential model = makeClassifier();
  std::vector<NDArray> initial = model.getWeights();
  Trainer trainer(model, config(), nullptr);
  // Every weight 0: Keras's weighted loss is 0, so are the gradients, and
  // Adam leaves the weights where they were; the accuracy is unweighted.
  ArrayDataSource source(
      ExampleArray::fromNDArray(data.x, "x"),
      ExampleArray::fromNDArray(data.y, "y"), 32, DType::F32, DType::I32,
      ExampleArray::fromNDArray(NDArray::zeros({64}, DType::F32), "w"));
  History h = trainer.fit(source, quiet(1, 32));
  EXPECT_EQ(trainer.iterations(), 2);
  EXPECT_EQ(h.epochs[0].values.at("loss"), 0.0);
  EXPECT_EQ(h.epochs[0].values.count("accuracy"), 1u);
  std::vector<NDArray> after = trainer.getWeights();
  ASSERT_EQ(after.size(), initial.size());
  for (size_t k = 0; k < after.size(); ++k)
    EXPECT_EQ(after[k].toVector(), initial[k].toVector()) << k;
}

TEST(Fit, RefusesClassAndSampleWeightsTogether) {
  Dataset data = makeData(64, 11);
  Sequential model = makeClassifier();
  TrainingConfig c = config();
  c.classWeight = {{0, 2.0}};
  Trainer trainer(model, c, nullptr);
  ArrayDataSource source(
      ExampleArray::fromNDArray(data.x, "x"),
      ExampleArray::fromNDArray(data.y, "y"), 32, DType::F32, DType::I32,
      ExampleArray::fromNDArray(NDArray::zeros({64}, DType::F32), "w"));
  EXPECT_EQ(errorOf([&] { trainer.fit(source, quiet(1, 32)); }),
            "fit: class_weight and sample_weight cannot be used together "
            "(as in Keras)");
  EXPECT_EQ(trainer.iterations(), 0);
  c.classWeight = {{10, 2.0}};
  EXPECT_EQ(errorOf([&] { Trainer(model, c, nullptr); }),
            "class_weight: class 10 is out of range: the model predicts "
            "3 classes (0 to 2)");
}

/// A user's Sequence: batches made on demand from a Dataset (as a reader of
/// files too big for memory would), counting every read and hook.
class CountingSequence : public DataSource {
public:
  CountingSequence(const Dataset &data, int64_t batch)
      : data_(data), batch_(batch), reads_(numBatches()) {}
  int64_t numBatches() const override {
    return (data_.x.dim(0) + batch_ - 1) / batch_;
  }
  Batch batch(int64_t i) const override {
    reads_[i].fetch_add(1);
    int64_t begin = i * batch_, rows = std::min(batch_, data_.x.dim(0) - begin);
    Batch b;
    b.x = NDArray::empty({rows, 4}, DType::F32);
    b.y = NDArray::empty({rows}, DType::I32);
    std::copy_n(data_.x.data<float>() + begin * 4, rows * 4, b.x.data<float>());
    std::copy_n(data_.y.data<int32_t>() + begin, rows, b.y.data<int32_t>());
    return b;
  }
  void onEpochBegin(int64_t epoch) override {
    events.push_back("sequence begin " + std::to_string(epoch));
  }
  void onEpochEnd() override {
    for (std::atomic<int> &r : reads_)
      perEpoch.push_back(r.exchange(0));
    events.push_back("sequence end");
  }
  std::vector<std::string> events;
  /// Reads of each batch, epoch after epoch.
  std::vector<int> perEpoch;

private:
  const Dataset &data_;
  int64_t batch_;
  mutable std::vector<std::atomic<int>> reads_;
};

TEST(Fit, UserSequenceTrainsThroughWorkersAsTheArraysDo) {
  struct Recorder : Callback {
    std::vector<std::string> *events;
    void onTrainBegin(Logs &) override { events->push_back("train begin"); }
    void onEpochBegin(int64_t e, Logs &) override {
      events->push_back("epoch begin " + std::to_string(e));
    }
    void onEpochEnd(int64_t e, Logs &logs) override {
      events->push_back("epoch end " + std::to_string(e) +
                        (logs.count("loss") ? " with loss" : ""));
    }
    void onTrainEnd(Logs &) override { events->push_back("train end"); }
  };
  Dataset data = makeData(100, 12);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  CountingSequence sequence(data, 16);
  auto recorder = std::make_shared<Recorder>();
  recorder->events = &sequence.events;
  FitOptions f = quiet(2, 16);
  f.workers = 2;
  f.callbacks = {recorder};
  History h = trainer.fit(sequence, f);

  // Every batch (the partial seventh too) read once per epoch, by workers
  // running ahead of the step.
  EXPECT_EQ(sequence.perEpoch, std::vector<int>(14, 1));
  EXPECT_EQ(trainer.iterations(), 14);
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h.epochs[1].steps, 7);
  // The source is told first, so its workers can start reading while the
  // callbacks run; its epoch ends before the epoch's logs are final.
  std::vector<std::string> order = {"train begin",           "sequence begin 0",
                                    "epoch begin 0",         "sequence end",
                                    "epoch end 0 with loss", "sequence begin 1",
                                    "epoch begin 1",         "sequence end",
                                    "epoch end 1 with loss", "train end"};
  EXPECT_EQ(sequence.events, order);

  // The same batches from the arrays, unshuffled: the same weights, bit
  // for bit, so the source changes nothing but where the examples live.
  Sequential twin = makeClassifier();
  Trainer reference(twin, config(), nullptr);
  FitOptions plain = quiet(2, 16);
  plain.shuffle = false;
  reference.fit(data, plain);
  EXPECT_TRUE(sameWeights(trainer.getWeights(), reference.getWeights()));
}

TEST(Fit, StepsPerEpochContinuesThePassAsKeras) {
  // 7 batches, 3 an epoch: epochs read batches 0-2, 3-5, then 6 alone (the
  // epoch reaching the data's end stops there), then a new pass 0-2.
  Dataset data = makeData(100, 12);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  CountingSequence sequence(data, 16);
  FitOptions f = quiet(4, 16);
  f.stepsPerEpoch = 3;
  History h = trainer.fit(sequence, f);
  ASSERT_EQ(h.size(), 4u);
  std::vector<int64_t> steps;
  for (const EpochLogs &e : h.epochs)
    steps.push_back(e.steps);
  EXPECT_EQ(steps, (std::vector<int64_t>{3, 3, 1, 3}));
  std::vector<int> reads = {1, 1, 1, 0, 0, 0, 0, // epoch 0
                            0, 0, 0, 1, 1, 1, 0, // epoch 1
                            0, 0, 0, 0, 0, 0, 1, // epoch 2
                            1, 1, 1, 0, 0, 0, 0};
  EXPECT_EQ(sequence.perEpoch, reads);
  // A pass begins at epochs 0 and 3 only; every epoch ends.
  EXPECT_EQ(llvm::count(sequence.events, "sequence begin 0"), 1);
  EXPECT_EQ(llvm::count(sequence.events, "sequence begin 3"), 1);
  EXPECT_EQ(llvm::count(sequence.events, "sequence end"), 4);
  EXPECT_EQ(trainer.iterations(), 10);
}

TEST(Fit, ValidationFreqValidatesThoseEpochsOnly) {
  Dataset data = makeData(64, 11), val = makeData(32, 13);
  Sequential model = makeClassifier();
  Trainer trainer(model, config(), nullptr);
  FitOptions f = quiet(4, 32);
  f.validationFreq = 2;
  History every2 = trainer.fit(data, f, &val);
  f.validationEpochs = {1, 4};
  History listed = trainer.fit(data, f, &val);
  auto validated = [](const History &h) {
    std::vector<bool> v;
    for (const EpochLogs &e : h.epochs)
      v.push_back(e.values.count("val_loss") > 0);
    return v;
  };
  EXPECT_EQ(validated(every2), (std::vector<bool>{false, true, false, true}));
  EXPECT_EQ(validated(listed), (std::vector<bool>{true, false, false, true}));
  f.validationEpochs.clear();
  f.validationFreq = 0;
  EXPECT_EQ(errorOf([&] { trainer.fit(data, f, &val); }),
            "fit: validation_freq must be 1 or more, got 0");
}

} // namespace
