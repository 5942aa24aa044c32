//===- TrainingConfigTest.cpp - Name parsers, defaults, validation --------===//
//
// One parser per name family with one message listing what is accepted,
// Keras's default learning rate resolved in one place, and validate()
// naming the field at fault. Round trip through kc-build-train-step's
// options.
//
//===----------------------------------------------------------------------===//

#include "passes/TrainingConfig.h"
#include "passes/TrainStep.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace kcc;

namespace {

std::string errorOf(llvm::Error err) { return llvm::toString(std::move(err)); }

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  return value ? std::string() : errorOf(value.takeError());
}

TEST(TrainingConfig, ParsersAcceptKerasNames) {
  EXPECT_EQ(llvm::cantFail(parseLoss("mse")), LossKind::MeanSquaredError);
  EXPECT_EQ(llvm::cantFail(parseLoss("categorical_crossentropy")),
            LossKind::CategoricalCrossentropy);
  EXPECT_EQ(llvm::cantFail(parseOptimizer("RMSprop")), OptimizerKind::RMSprop);
  EXPECT_EQ(llvm::cantFail(parseOptimizer("sgd")), OptimizerKind::SGD);
  EXPECT_EQ(
      llvm::cantFail(parseMetric("acc", LossKind::CategoricalCrossentropy)),
      MetricKind::CategoricalAccuracy);
  EXPECT_EQ(llvm::cantFail(parseExecMode("interpreted")),
            ExecMode::Interpreted);
  for (LossKind k :
       {LossKind::SparseCategoricalCrossentropy, LossKind::BinaryCrossentropy})
    EXPECT_EQ(llvm::cantFail(parseLoss(lossName(k))), k);
}

TEST(TrainingConfig, UnknownNamesListWhatIsAccepted) {
  EXPECT_EQ(errorOf(parseLoss("hinge")),
            "unknown loss 'hinge' (expected sparse_categorical_crossentropy, "
            "categorical_crossentropy, binary_crossentropy, "
            "mean_squared_error)");
  EXPECT_EQ(errorOf(parseOptimizer("adagrad")),
            "unknown optimizer 'adagrad' (expected sgd, adam, rmsprop)");
  EXPECT_EQ(errorOf(parseMetric("accuracy", LossKind::MeanSquaredError)),
            "unknown metric 'accuracy' for loss mean_squared_error (expected "
            "sparse_categorical_accuracy, categorical_accuracy, "
            "binary_accuracy)");
  EXPECT_EQ(errorOf(parseExecMode("eager")),
            "unknown mode 'eager' (expected compiled, interpreted)");
}

TEST(TrainingConfig, DefaultLearningRateIsKeras) {
  OptimizerConfig o;
  EXPECT_DOUBLE_EQ(o.resolvedLearningRate(), 1e-3);
  o.kind = OptimizerKind::SGD;
  EXPECT_DOUBLE_EQ(o.resolvedLearningRate(), 1e-2);
  o.learningRate = 0.5;
  EXPECT_DOUBLE_EQ(o.resolvedLearningRate(), 0.5);
}

TEST(TrainingConfig, ValidateNamesTheField) {
  EXPECT_EQ(errorOf(TrainingConfig().validate()), "");
  TrainingConfig c;
  c.metrics = {"accuracy", "auc"};
  EXPECT_NE(errorOf(c.validate()).find("unknown metric 'auc'"),
            std::string::npos);
  c = TrainingConfig();
  c.batch = 0;
  EXPECT_EQ(errorOf(c.validate()), "batch must be positive, got 0");
  c = TrainingConfig();
  c.optimizer.learningRate = -1;
  EXPECT_EQ(errorOf(c.validate()),
            "learning_rate must be finite and > 0, got -1");
  c = TrainingConfig();
  c.optimizer.momentum = 1;
  EXPECT_EQ(errorOf(c.validate()),
            "momentum must be finite and in [0, 1), got 1");
  c = TrainingConfig();
  c.optimizer.epsilon = 0;
  EXPECT_EQ(errorOf(c.validate()), "epsilon must be finite and > 0, got 0");
  c = TrainingConfig();
  c.optimizer.rho = std::nan("");
  EXPECT_NE(errorOf(c.validate()).find("rho must be finite"),
            std::string::npos);
}

TEST(TrainingConfig, RoundTripsThroughTheTrainStepOptions) {
  TrainingConfig c;
  c.loss = {LossKind::BinaryCrossentropy, /*fromLogits=*/true};
  c.metrics = {"acc"};
  c.optimizer.kind = OptimizerKind::RMSprop;
  c.optimizer.momentum = 0.5;
  c.optimizer.rho = 0.8;
  KcBuildTrainStepOptions options = toTrainStepOptions(c);
  EXPECT_EQ(options.loss, "binary_crossentropy");
  EXPECT_EQ(options.optimizer, "rmsprop");
  TrainingConfig back = llvm::cantFail(fromTrainStepOptions(options));
  EXPECT_EQ(back.loss.kind, c.loss.kind);
  EXPECT_TRUE(back.loss.fromLogits);
  EXPECT_EQ(back.metrics, c.metrics);
  EXPECT_EQ(back.optimizer.kind, c.optimizer.kind);
  EXPECT_DOUBLE_EQ(back.optimizer.momentum, 0.5);
  EXPECT_DOUBLE_EQ(back.optimizer.rho, 0.8);

  // The pass's defaults are TrainingConfig's.
  KcBuildTrainStepOptions defaults;
  TrainingConfig fromDefaults = llvm::cantFail(fromTrainStepOptions(defaults));
  EXPECT_EQ(fromDefaults.loss.kind, TrainingConfig().loss.kind);
  EXPECT_EQ(fromDefaults.optimizer.kind, TrainingConfig().optimizer.kind);
  EXPECT_DOUBLE_EQ(fromDefaults.optimizer.beta2, 0.999);
}

} // namespace
