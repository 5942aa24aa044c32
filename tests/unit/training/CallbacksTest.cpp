//===- CallbacksTest.cpp - Keras's callback rules, epoch by epoch ---------===//
//
// Each monitor callback is fed a sequence of epoch logs and must stop,
// reduce or save at the epoch Keras 3's rule gives (the expected epochs are
// worked out by hand from keras/src/callbacks in the comments).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/ErrorOf.h"

#include "frontend/Layers.h"
#include "frontend/training/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

struct Harness {
  Sequential model{{Input({2}), Dense(2, "softmax")}, "cb", 1};
  Trainer trainer{model, TrainingConfig(), nullptr};

  /// Runs `cb` over epochs with `monitor` = values[e]; returns the epochs
  /// run (training stops after the epoch that set stopTraining).
  int64_t run(Callback &cb, const std::string &monitor,
              const std::vector<double> &values) {
    cb.setTrainer(&trainer);
    trainer.stopTraining = false;
    Logs logs;
    cb.onTrainBegin(logs);
    int64_t e = 0;
    for (; e < static_cast<int64_t>(values.size()); ++e) {
      Logs epoch{{monitor, values[e]}, {"loss", 1.0}};
      cb.onEpochEnd(e, epoch);
      if (trainer.stopTraining) {
        ++e;
        break;
      }
    }
    cb.onTrainEnd(logs);
    return e;
  }
};

TEST(EarlyStopping, StopsWhenPatienceRunsOut) {
  Harness h;
  EarlyStopping::Options o;
  o.patience = 2;
  EarlyStopping es(o);
  // e0 1.0 best; e1 0.9 best; e2 0.95 wait 1; e3 0.92 wait 2 >= 2: stop.
  EXPECT_EQ(h.run(es, "val_loss", {1.0, 0.9, 0.95, 0.92, 0.5, 0.4}), 4);
  EXPECT_EQ(es.stoppedEpoch, 3);
  EXPECT_EQ(es.bestEpoch, 1);
  EXPECT_DOUBLE_EQ(es.best, 0.9);
}

TEST(EarlyStopping, MinDeltaAndModes) {
  Harness h;
  EarlyStopping::Options o;
  o.patience = 1;
  o.minDelta = 0.05;
  EarlyStopping es(o);
  // min_delta 0.05: 0.97 is not an improvement on 1.0 -> stop at e1.
  EXPECT_EQ(h.run(es, "val_loss", {1.0, 0.97, 0.5}), 2);
  EXPECT_EQ(es.stoppedEpoch, 1);

  // "auto" maximizes an accuracy.
  EarlyStopping::Options a;
  a.monitor = "val_accuracy";
  a.patience = 1;
  EarlyStopping acc(a);
  EXPECT_EQ(h.run(acc, "val_accuracy", {0.5, 0.6, 0.55, 0.9}), 3);
  EXPECT_EQ(acc.stoppedEpoch, 2);

  // patience 0 never stops at epoch 0 (Keras requires epoch > 0).
  EarlyStopping::Options z;
  z.patience = 0;
  EarlyStopping zero(z);
  EXPECT_EQ(h.run(zero, "val_loss", {1.0, 1.0, 0.5}), 2);

  EarlyStopping::Options bad;
  bad.monitor = "val_f2";
  EXPECT_EQ(errorOf([&] { EarlyStopping x(bad); }),
            "EarlyStopping: monitor 'val_f2': cannot tell whether it should "
            "be maximized or minimized; give mode=max or mode=min");
}

TEST(EarlyStopping, BaselineKeepsWaiting) {
  Harness h;
  EarlyStopping::Options o;
  o.patience = 2;
  o.baseline = 0.5;
  EarlyStopping es(o);
  // Improvements that do not beat the baseline do not reset the wait:
  // e0 wait 1, e1 wait 2 (both improve, so no check), e2 no improvement
  // with wait 3 >= 2: stop at e2. Without the baseline e2 waits 1.
  EXPECT_EQ(h.run(es, "val_loss", {0.9, 0.8, 0.8, 0.6}), 3);
  EXPECT_EQ(es.stoppedEpoch, 2);
  EarlyStopping::Options plain;
  plain.patience = 2;
  EarlyStopping no(plain);
  EXPECT_EQ(h.run(no, "val_loss", {0.9, 0.8, 0.8, 0.6}), 4);
}

TEST(EarlyStopping, RestoresTheBestWeights) {
  Harness h;
  EarlyStopping::Options o;
  o.patience = 1;
  o.restoreBestWeights = true;
  EarlyStopping es(o);
  es.setTrainer(&h.trainer);
  std::vector<NDArray> w = h.trainer.getWeights();
  Logs logs;
  es.onTrainBegin(logs);
  Logs e0{{"val_loss", 0.5}};
  es.onEpochEnd(0, e0); // best: these weights
  std::vector<NDArray> worse = w;
  for (NDArray &a : worse)
    a = NDArray::zeros(a.shape(), a.dtype());
  h.trainer.setWeights(worse);
  Logs e1{{"val_loss", 0.7}};
  es.onEpochEnd(1, e1);
  EXPECT_TRUE(h.trainer.stopTraining);
  es.onTrainEnd(logs);
  std::vector<NDArray> now = h.trainer.getWeights();
  for (size_t i = 0; i < w.size(); ++i)
    EXPECT_EQ(now[i].toVector(), w[i].toVector());
}

TEST(ReduceLROnPlateau, ReducesAfterPatienceThenCoolsDown) {
  Harness h;
  ReduceLROnPlateau::Options o;
  o.factor = 0.5;
  o.patience = 1;
  o.cooldown = 2;
  o.minLr = 2e-4;
  ReduceLROnPlateau r(o);
  r.setTrainer(&h.trainer);
  h.trainer.setLearningRate(1e-3);
  Logs logs;
  r.onTrainBegin(logs);
  std::vector<double> lrs;
  for (double v : {1.0, 1.0, 1.0, 1.0, 1.0, 1.0}) {
    Logs epoch{{"val_loss", v}};
    r.onEpochEnd(static_cast<int64_t>(lrs.size()), epoch);
    EXPECT_DOUBLE_EQ(epoch.at("learning_rate"),
                     lrs.empty() ? 1e-3 : lrs.back());
    lrs.push_back(h.trainer.learningRate());
  }
  // e0 best; e1 wait 1 -> 5e-4, cooldown 2; e2 counter 2 -> 1, still in
  // cooldown; e3 counter 1 -> 0, wait 1 -> 2.5e-4; e4 cooldown; e5 wait 1
  // -> max(1.25e-4, 2e-4) = 2e-4.
  std::vector<double> want = {1e-3, 5e-4, 5e-4, 2.5e-4, 2.5e-4, 2e-4};
  ASSERT_EQ(lrs.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_DOUBLE_EQ(lrs[i], want[i]) << "epoch " << i;

  ReduceLROnPlateau::Options bad;
  bad.factor = 1.0;
  EXPECT_EQ(errorOf([&] { ReduceLROnPlateau x(bad); }),
            "ReduceLROnPlateau does not support a factor >= 1.0. Got 1.0");
}

TEST(ModelCheckpoint, FormatsThePathAndSavesTheBest) {
  Harness h;
  std::vector<std::pair<std::string, bool>> calls;
  ModelCheckpoint::Options o;
  o.filepath = "ckpt-{epoch:02d}-{val_loss:.4f}.keras";
  o.saveBestOnly = true;
  ModelCheckpoint cp(o, [&](const std::string &p, bool weightsOnly) {
    calls.emplace_back(p, weightsOnly);
  });
  h.run(cp, "val_loss", {0.51234, 0.6, 0.4, 0.45});
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].first, "ckpt-01-0.5123.keras");
  EXPECT_EQ(calls[1].first, "ckpt-03-0.4000.keras");
  EXPECT_FALSE(calls[0].second);

  ModelCheckpoint::Options every;
  every.filepath = "w-{epoch}.weights.h5";
  every.saveWeightsOnly = true;
  ModelCheckpoint all(every,
                      [&](const std::string &, bool w) { EXPECT_TRUE(w); });
  h.run(all, "val_loss", {1, 2, 3});
  EXPECT_EQ(all.saved,
            (std::vector<std::string>{"w-1.weights.h5", "w-2.weights.h5",
                                      "w-3.weights.h5"}));

  ModelCheckpoint::Options wrong;
  wrong.filepath = "model.h5";
  EXPECT_EQ(errorOf([&] { ModelCheckpoint x(wrong, [](auto &, bool) {}); }),
            "The filepath provided must end in `.keras` (Keras model "
            "format). Received: filepath=model.h5");
}

// A metric with several thresholds logs a list. The expected text is what
// Keras 3.15's CSVLogger and Progbar wrote for Precision(thresholds=[0.3,
// 0.5, 0.7]) and TruePositives(thresholds=[0.3, 0.5]) at these values.
Logs listLogs() {
  return {{"accuracy", 0.5},
          {"loss", 0.877074658870697},
          {"precision", LogValue::list({3.0 / 7, 0.5, 0.5})},
          {"true_positives", LogValue::list({6, 4})}};
}

TEST(LogValue, NumbersAndListsAsKerasPrintsThem) {
  LogValue p = LogValue::list({3.0 / 7, 0.5, 0.5});
  EXPECT_TRUE(p.isList());
  EXPECT_EQ(p.str(), "[0.42857143, 0.5, 0.5]");
  EXPECT_EQ(LogValue::list({6, 4}).str(), "[6.0, 4.0]");
  // numpy's str of each float32 (an exponent below 1e-4 and from 1e6, by
  // value).
  EXPECT_EQ(LogValue::list({1e-5, -2.5e20, 0.0001, 0.00015, 0}).str(),
            "[1e-05, -2.5e+20, 1e-04, 0.00015, 0.0]");
  EXPECT_EQ(LogValue::list({999999, 1e6, 16777216}).str(),
            "[999999.0, 1e+06, 1.6777216e+07]");
  EXPECT_NEAR(p.mean(), (3.0 / 7 + 1) / 3, 1e-15);
  LogValue n = 0.1;
  EXPECT_FALSE(n.isList());
  EXPECT_EQ(n.str(), "0.1");
  double d = n; // scalar users read numbers as before
  EXPECT_EQ(d, 0.1);
  EXPECT_EQ(errorOf([&] { (void)p.number(); }),
            "a log value is a list of 3 numbers (a metric with several "
            "thresholds or classes), not a number");
}

TEST(CSVLogger, WritesAListAsKerasDoes) {
  std::string path = ::testing::TempDir() + "/list-log.csv";
  CSVLogger csv(path);
  Logs logs = listLogs();
  csv.onTrainBegin(logs);
  csv.onEpochEnd(0, logs);
  csv.onTrainEnd(logs);
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "epoch,accuracy,loss,precision,true_positives\r\n"
            "0,0.5,0.877074658870697,\"\"\"[0.42857143, 0.5, 0.5]\"\"\","
            "\"\"\"[6.0, 4.0]\"\"\"\r\n");
}

TEST(ProgbarLogger, ShowsAListsMean) {
  std::string text;
  llvm::raw_string_ostream os(text);
  ProgbarLogger bar(os, /*verbose=*/2, /*epochs=*/1, /*stepsPerEpoch=*/1);
  Logs logs = listLogs();
  bar.onEpochBegin(0, logs);
  bar.onBatchEnd(0, logs);
  bar.onEpochEnd(0, logs);
  EXPECT_NE(text.find(" - loss: 0.8771 - accuracy: 0.5000 - precision: "
                      "0.4762 - true_positives: 5.0000\n"),
            std::string::npos)
      << text;
}

TEST(Monitors, RefuseAList) {
  Harness h;
  EarlyStopping::Options o;
  o.monitor = "val_precision";
  EarlyStopping es(o);
  es.setTrainer(&h.trainer);
  Logs logs = {{"val_precision", LogValue::list({0.2, 0.7})}};
  es.onTrainBegin(logs);
  EXPECT_EQ(errorOf([&] { es.onEpochEnd(2, logs); }),
            "EarlyStopping: monitor 'val_precision' is a list of 2 values at "
            "the end of epoch 3 (a metric with several thresholds or "
            "classes), which has no single best; monitor a metric with one "
            "value");
  ReduceLROnPlateau::Options r;
  r.monitor = "val_precision";
  ReduceLROnPlateau plateau(r);
  plateau.setTrainer(&h.trainer);
  plateau.onTrainBegin(logs);
  EXPECT_NE(errorOf([&] {
              plateau.onEpochEnd(0, logs);
            }).find("ReduceLROnPlateau: monitor 'val_precision' is a list"),
            std::string::npos);
}

TEST(PythonFormat, FormatsAsStrFormat) {
  std::map<std::string, double> v = {
      {"epoch", 3}, {"val_loss", 0.123456789}, {"loss", 12.5}};
  EXPECT_EQ(formatPythonPattern("{epoch:02d}-{val_loss:.4f}", v, {"epoch"}),
            "03-0.1235");
  EXPECT_EQ(formatPythonPattern("{epoch}_{loss}_{{x}}", v, {"epoch"}),
            "3_12.5_{x}");
  EXPECT_EQ(
      formatPythonPattern("{loss:>8.2f}|{loss:<7}|{loss:+.1e}|{val_loss:.1%}",
                          v, {"epoch"}),
      "   12.50|12.5   |+1.2e+01|12.3%");
  EXPECT_EQ(errorOf([&] { formatPythonPattern("{val_acc}", v, {}); }),
            "'{val_acc}': no value 'val_acc' to format (the logs hold: "
            "epoch, loss, val_loss)");
  EXPECT_EQ(errorOf([&] { formatPythonPattern("{loss:d}", v, {}); }),
            "format field 'loss': unknown format code 'd' for a float value");

  EXPECT_EQ(pythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(pythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(pythonFloatRepr(1e-5), "1e-05");
  EXPECT_EQ(pythonFloatRepr(123456.0), "123456.0");
  EXPECT_EQ(pythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(pythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(pythonFloatRepr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(pythonFloatRepr(-2.5), "-2.5");
}

} // namespace
