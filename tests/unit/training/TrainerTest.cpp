//===- TrainerTest.cpp - compile + fit through the interpreter ------------===//
//
// The Keras tutorial MLP on real Fashion-MNIST: traced by the frontend,
// turned into @train_step by kc-build-train-step (autodiff + Adam), run
// batch by batch by the interpreter. One epoch must reach the accuracy Keras
// reaches (~84-85%); the test prints the accuracy and the epoch time.
//
//===----------------------------------------------------------------------===//

#include "frontend/training/Trainer.h"
#include "frontend/Layers.h"
#include "runtime/Error.h"

#include <gtest/gtest.h>

#include <cstdio>

using namespace kcc;

namespace {

Sequential makeMlp() {
  return Sequential({Input({28, 28, 1}), Flatten(), Dense(128, "relu"),
                     Dense(64, "relu"), Dense(10, "softmax")},
                    "mlp", /*seed=*/1);
}

/// Adam with sparse categorical cross-entropy (Keras's defaults), run by
/// the interpreter.
TrainingConfig adam() {
  TrainingConfig o;
  o.metrics = {"accuracy"};
  o.mode = ExecMode::Interpreted;
  return o;
}

TEST(Trainer, RejectsAnUnknownMetricAndBadHyperParameters) {
  Sequential model = makeMlp();
  TrainingConfig o = adam();
  o.metrics = {"auc"};
  EXPECT_THROW(Trainer(model, o), Error);
  o = adam();
  o.optimizer.learningRate = 0.0;
  EXPECT_THROW(Trainer(model, o), Error);
  o = adam();
  o.optimizer.beta2 = 1.0;
  EXPECT_THROW(Trainer(model, o), Error);
}

TEST(Trainer, MlpReaches83PercentOnFashionMnistInOneEpoch) {
  FashionMnist data = loadFashionMnist();
  Sequential model = makeMlp();
  Trainer trainer(model, adam());
  EXPECT_DOUBLE_EQ(trainer.learningRate(), 1e-3);

  double before = trainer.evaluate(data.test).at("accuracy");
  FitOptions fit;
  fit.epochs = 1;
  fit.batchSize = 32;
  History history = trainer.fit(data.train, fit);
  double after = trainer.evaluate(data.test).at("accuracy");

  ASSERT_EQ(history.size(), 1u);
  const EpochLogs &epoch = history.epochs[0];
  std::printf("[ training ] MLP 784-128-64-10, Adam 1e-3, batch 32, 1 epoch "
              "(interpreter): train loss %.4f, train accuracy %.4f, test "
              "accuracy %.4f (untrained %.4f), %.1f s/epoch, %.2f ms/step, "
              "%lld ops dispatched\n",
              epoch.values.at("loss"), epoch.values.at("accuracy"), after,
              before, epoch.seconds, 1e3 * epoch.seconds / epoch.steps,
              static_cast<long long>(trainer.stats().opsDispatched));
  EXPECT_EQ(epoch.steps, 60000 / 32);
  EXPECT_EQ(trainer.iterations(), 60000 / 32);
  EXPECT_GE(after, 0.83);
  EXPECT_LT(before, 0.3);
  EXPECT_GT(epoch.values.at("accuracy"), 0.7);
  EXPECT_LT(epoch.values.at("loss"), 0.8);
}

} // namespace
