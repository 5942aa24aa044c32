//===- TrainingConfigTest.cpp - Name parsers, defaults, validation --------===//
//
// One parser per name family with one message listing what is accepted,
// Keras's default learning rate resolved in one place, and validate()
// naming the field at fault. Round trip through kc-build-train-step's
// options.
//
//===----------------------------------------------------------------------===//

#include "config/TrainingConfig.h"
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
  for (LossKind k : allLosses()) {
    EXPECT_EQ(llvm::cantFail(parseLoss(lossName(k))), k);
    EXPECT_EQ(llvm::cantFail(parseLoss(lossClassName(k))), k);
  }
  // keras.losses.get's aliases.
  EXPECT_EQ(llvm::cantFail(parseLoss("mae")), LossKind::MeanAbsoluteError);
  EXPECT_EQ(llvm::cantFail(parseLoss("MAPE")),
            LossKind::MeanAbsolutePercentageError);
  EXPECT_EQ(llvm::cantFail(parseLoss("msle")),
            LossKind::MeanSquaredLogarithmicError);
  EXPECT_EQ(llvm::cantFail(parseLoss("kld")), LossKind::KLDivergence);
  EXPECT_EQ(llvm::cantFail(parseLoss("bce")), LossKind::BinaryCrossentropy);
}

TEST(TrainingConfig, LossArgumentsRoundTripTheirTextForm) {
  LossConfig huber = llvm::cantFail(LossConfig::parse("Huber(delta=2.5)"));
  EXPECT_EQ(huber.kind, LossKind::Huber);
  EXPECT_EQ(huber.delta, 2.5);
  EXPECT_EQ(huber.str(), "huber(delta=2.5)");
  LossConfig focal = llvm::cantFail(LossConfig::parse(
      "binary_focal_crossentropy(apply_class_balancing=true,alpha=0.4,"
      "gamma=3,from_logits=true,label_smoothing=0.1,reduction=sum)"));
  EXPECT_TRUE(focal.applyClassBalancing);
  EXPECT_EQ(focal.resolvedAlpha(), 0.4);
  EXPECT_EQ(focal.resolvedGamma(), 3);
  EXPECT_TRUE(focal.fromLogits);
  EXPECT_EQ(focal.labelSmoothing, 0.1);
  EXPECT_EQ(focal.reduction, LossReduction::Sum);
  LossConfig again = llvm::cantFail(LossConfig::parse(focal.str()));
  EXPECT_EQ(again.str(), focal.str());
  // Defaults are left out; Dice's axis defaults to every axis.
  EXPECT_EQ(llvm::cantFail(LossConfig::parse("mse()")).str(),
            "mean_squared_error");
  EXPECT_EQ(llvm::cantFail(LossConfig::parse("dice(axis=1)")).str(),
            "dice(axis=1)");
  EXPECT_EQ(llvm::cantFail(LossConfig::parse("tversky(alpha=0.5)")).str(),
            "tversky");
  LossConfig sparse = llvm::cantFail(
      LossConfig::parse("sparse_categorical_crossentropy(ignore_class=0)"));
  EXPECT_EQ(sparse.ignoreClass, 0);
  EXPECT_EQ(sparse.str(), "sparse_categorical_crossentropy(ignore_class=0)");
  // Circle's gamma defaults to 80 (the focal losses' to 2).
  LossConfig circle = llvm::cantFail(
      LossConfig::parse("Circle(gamma=20,margin=0.25,remove_diagonal=false)"));
  EXPECT_EQ(circle.resolvedGamma(), 20);
  EXPECT_EQ(circle.margin, 0.25);
  EXPECT_FALSE(circle.removeDiagonal);
  EXPECT_EQ(circle.str(), "circle(gamma=20,margin=0.25,remove_diagonal=false)");
  EXPECT_EQ(llvm::cantFail(LossConfig::parse("circle(gamma=80)")).str(),
            "circle");
  LossConfig gce = llvm::cantFail(
      LossConfig::parse("CategoricalGeneralizedCrossEntropy(q=0.3)"));
  EXPECT_EQ(gce.q, 0.3);
  EXPECT_EQ(gce.str(), "categorical_generalized_cross_entropy(q=0.3)");
  EXPECT_TRUE(lossTakesLabels(gce.kind));
  EXPECT_EQ(
      errorOf(llvm::cantFail(LossConfig::parse(
                                 "categorical_generalized_cross_entropy(q=1)"))
                  .validate()),
      "loss categorical_generalized_cross_entropy: q must be in the interval "
      "(0, 1), got 1");
  // tf.keras's "auto" is sum_over_batch_size.
  EXPECT_EQ(llvm::cantFail(LossConfig::parse("bce(reduction=auto)")).str(),
            "binary_crossentropy");
  // Kept as a custom loss only where asked.
  EXPECT_EQ(llvm::cantFail(LossConfig::parse("my_loss", true)).custom,
            "my_loss");
}

TEST(TrainingConfig, LossArgumentErrorsNameTheArgument) {
  EXPECT_EQ(errorOf(LossConfig::parse("huber(gamma=2)")),
            "loss huber takes no argument 'gamma' (it takes delta, "
            "reduction)");
  EXPECT_EQ(errorOf(LossConfig::parse("huber(delta=big)")),
            "loss huber: delta must be a number, got 'big'");
  EXPECT_EQ(errorOf(LossConfig::parse("huber(delta=2")),
            "loss 'huber(delta=2' is not NAME or NAME(KEY=VALUE,...): no "
            "closing ')'");
  EXPECT_EQ(errorOf(LossConfig::parse("mae(reduction=most)")),
            "unknown reduction 'most' (expected sum_over_batch_size, sum, "
            "mean, mean_with_sample_weight)");
  TrainingConfig config;
  config.loss = llvm::cantFail(LossConfig::parse("mae(reduction=none)"));
  EXPECT_EQ(errorOf(config.validate()),
            "loss mean_absolute_error: reduction 'none' leaves one loss per "
            "example, which fit() cannot differentiate (as in Keras); use "
            "sum_over_batch_size, sum, mean or mean_with_sample_weight");
  config.loss = llvm::cantFail(LossConfig::parse("bce(label_smoothing=2)"));
  EXPECT_EQ(errorOf(config.validate()),
            "loss binary_crossentropy: label_smoothing must be in [0, 1], "
            "got 2");
}

TEST(TrainingConfig, UnknownNamesListWhatIsAccepted) {
  EXPECT_EQ(
      errorOf(parseLoss("not_a_loss")),
      "unknown loss 'not_a_loss' (expected sparse_categorical_crossentropy, "
      "categorical_crossentropy, binary_crossentropy, "
      "mean_squared_error, mean_absolute_error, "
      "mean_absolute_percentage_error, mean_squared_logarithmic_error, "
      "huber, log_cosh, poisson, kl_divergence, cosine_similarity, "
      "hinge, squared_hinge, categorical_hinge, "
      "binary_focal_crossentropy, categorical_focal_crossentropy, dice, "
      "tversky, ctc, categorical_generalized_cross_entropy, circle, their "
      "Keras class names, or mse, mae, mape, msle, kld, bce)");
  EXPECT_EQ(
      errorOf(parseOptimizer("ftrl")),
      "unknown optimizer 'ftrl' (expected sgd, adam, rmsprop, adamw, adagrad, "
      "nadam, adamax, lion)");
  EXPECT_EQ(errorOf(parseMetric("accuracy", LossKind::MeanSquaredError)),
            "unknown metric 'accuracy' for loss mean_squared_error (expected "
            "sparse_categorical_accuracy, categorical_accuracy, "
            "binary_accuracy, top_k_categorical_accuracy, "
            "sparse_top_k_categorical_accuracy, mae, mean_absolute_error, "
            "mse, mean_squared_error, mape, msle, logcosh, "
            "cosine_similarity, kl_divergence, poisson, hinge, squared_hinge, "
            "categorical_hinge, binary_crossentropy, categorical_crossentropy, "
            "sparse_categorical_crossentropy, pearson_correlation, "
            "concordance_correlation, TruePositives, FalsePositives, "
            "TrueNegatives, FalseNegatives, Precision, Recall, AUC, "
            "PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity, "
            "SpecificityAtSensitivity, FBetaScore, F1Score, IoU, MeanIoU, "
            "BinaryIoU, OneHotIoU, OneHotMeanIoU, R2Score, "
            "RootMeanSquaredError, or a class with Keras's arguments, "
            "Class(key=value,...))");
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
  // AUC takes targets of the prediction's shape, which the sparse loss's
  // class indices are not.
  c.metrics = {"accuracy", "auc"};
  EXPECT_EQ(errorOf(c.validate()),
            "metric 'auc' needs targets of the prediction's shape, which "
            "loss sparse_categorical_crossentropy does not take");
  c.metrics = {"f1"};
  std::string unknown = errorOf(c.validate());
  EXPECT_NE(unknown.find("unknown metric 'f1'"), std::string::npos);
  EXPECT_NE(unknown.find("AUC, PrecisionAtRecall"), std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("sparse_top_k_categorical_accuracy, mae, "
                         "mean_absolute_error, mse, mean_squared_error, "
                         "mape, "),
            std::string::npos)
      << unknown;
  // The sparse loss's targets are class indices: mae and the one-hot top-k
  // cannot take them, the sparse top-k can.
  c.metrics = {"sparse_top_k_categorical_accuracy", "accuracy"};
  EXPECT_EQ(errorOf(c.validate()), "");
  c.metrics = {"mae"};
  EXPECT_EQ(errorOf(c.validate()),
            "metric 'mae' needs targets of the prediction's shape, which "
            "loss sparse_categorical_crossentropy does not take");
  c.loss.kind = LossKind::CategoricalCrossentropy;
  c.metrics = {"top_k_categorical_accuracy", "mae", "mean_squared_error"};
  EXPECT_EQ(errorOf(c.validate()), "");
  c.metrics = {"sparse_top_k_categorical_accuracy"};
  EXPECT_EQ(errorOf(c.validate()),
            "metric 'sparse_top_k_categorical_accuracy' needs class-index "
            "targets, which loss categorical_crossentropy does not take");
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
  c.loss.kind = LossKind::BinaryCrossentropy;
  c.loss.fromLogits = true;
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
  EXPECT_DOUBLE_EQ(fromDefaults.optimizer.resolvedBeta2(), 0.999);
}

TEST(TrainingConfig, NewOptimizersParseAndTakeKerasDefaults) {
  for (const char *name :
       {"adamw", "AdamW", "adagrad", "Nadam", "adamax", "Lion"})
    EXPECT_TRUE(bool(parseOptimizer(name))) << name;
  EXPECT_EQ(errorOf(parseOptimizer("ftrl")),
            "unknown optimizer 'ftrl' (expected sgd, adam, rmsprop, adamw, "
            "adagrad, nadam, adamax, lion)");
  OptimizerConfig o;
  EXPECT_DOUBLE_EQ(o.resolvedBeta2(), 0.999);
  EXPECT_DOUBLE_EQ(o.resolvedWeightDecay(), 0.0);
  o.kind = OptimizerKind::Lion;
  EXPECT_DOUBLE_EQ(o.resolvedBeta2(), 0.99);
  o.kind = OptimizerKind::AdamW;
  EXPECT_DOUBLE_EQ(o.resolvedWeightDecay(), 0.004);
  o.weightDecay = 0.1;
  EXPECT_DOUBLE_EQ(o.resolvedWeightDecay(), 0.1);
}

TEST(TrainingConfig, ClippingAndWeightDecayAreValidated) {
  TrainingConfig c;
  c.optimizer.clipnorm = 1;
  c.optimizer.clipvalue = 1;
  EXPECT_EQ(errorOf(c.validate()), "only one of clipnorm, clipvalue and "
                                   "global_clipnorm can be set");
  c = TrainingConfig();
  c.optimizer.globalClipnorm = -1;
  EXPECT_EQ(errorOf(c.validate()),
            "global_clipnorm must be finite and >= 0, got -1");
  c = TrainingConfig();
  c.optimizer.weightDecay = -0.5;
  EXPECT_EQ(errorOf(c.validate()),
            "weight_decay must be finite and >= 0, got -0.5");
}

TEST(TrainingConfig, SchedulesRoundTripThroughTheirTextForm) {
  LearningRateSchedule s;
  s.kind = ScheduleKind::PiecewiseConstantDecay;
  s.boundaries = {10, 20};
  s.values = {0.1, 0.01, 0.001};
  EXPECT_EQ(s.str(), "PiecewiseConstantDecay(boundaries=[10,20],"
                     "values=[0.1,0.01,0.001])");
  LearningRateSchedule back =
      llvm::cantFail(LearningRateSchedule::parse(s.str()));
  EXPECT_EQ(back.values, s.values);
  EXPECT_DOUBLE_EQ(back.initialValue(), 0.1);

  llvm::Expected<LearningRateSchedule> cosine = LearningRateSchedule::parse(
      "cosine_decay(initial_learning_rate=0.5,decay_steps=100,"
      "warmup_target=1,warmup_steps=10)");
  ASSERT_TRUE(bool(cosine)) << errorOf(cosine.takeError());
  EXPECT_EQ(cosine->kind, ScheduleKind::CosineDecay);
  EXPECT_EQ(cosine->warmupTarget, 1.0);
  EXPECT_EQ(cosine->str(), "CosineDecay(initial_learning_rate=0.5,"
                           "decay_steps=100,alpha=0,warmup_target=1,"
                           "warmup_steps=10)");

  EXPECT_EQ(errorOf(LearningRateSchedule::parse(
                "ExponentialDecay(decay_steps=10,power=2)")),
            "ExponentialDecay has no field 'power'");
  EXPECT_EQ(errorOf(LearningRateSchedule::parse(
                "CosineDecay(initial_learning_rate=0.1)")),
            "CosineDecay needs decay_steps (Keras's constructor has no "
            "default for it)");
  EXPECT_EQ(errorOf(LearningRateSchedule::parse("PiecewiseConstantDecay("
                                                "boundaries=[10])")),
            "PiecewiseConstantDecay needs values (Keras's constructor has no "
            "default for it)");
  EXPECT_EQ(errorOf(LearningRateSchedule::parse("StepDecay(a=1)")),
            "unknown learning-rate schedule 'StepDecay' (expected "
            "ExponentialDecay, PiecewiseConstantDecay, InverseTimeDecay, "
            "PolynomialDecay, CosineDecay, CosineDecayRestarts)");
  LearningRateSchedule bad;
  bad.decaySteps = 0;
  EXPECT_EQ(errorOf(bad.validate()),
            "ExponentialDecay's decay_steps must be finite and > 0, got 0");
  bad = s;
  bad.values.pop_back();
  EXPECT_EQ(errorOf(bad.validate()),
            "PiecewiseConstantDecay needs one more value than boundaries, got "
            "2 boundaries and 2 values");
}

TEST(TrainingConfig, ScheduleAndClippingTravelThroughTheTrainStepOptions) {
  TrainingConfig c;
  c.optimizer.kind = OptimizerKind::Lion;
  c.optimizer.globalClipnorm = 2;
  c.optimizer.weightDecay = 0.01;
  LearningRateSchedule s;
  s.kind = ScheduleKind::CosineDecayRestarts;
  s.initialLearningRate = 0.25;
  s.decaySteps = 7;
  c.optimizer.schedule = s;
  EXPECT_DOUBLE_EQ(c.optimizer.resolvedLearningRate(), 0.25);
  KcBuildTrainStepOptions options = toTrainStepOptions(c);
  TrainingConfig back = llvm::cantFail(fromTrainStepOptions(options));
  EXPECT_EQ(back.optimizer.kind, OptimizerKind::Lion);
  EXPECT_DOUBLE_EQ(back.optimizer.resolvedBeta2(), 0.99);
  EXPECT_DOUBLE_EQ(back.optimizer.globalClipnorm, 2);
  EXPECT_DOUBLE_EQ(back.optimizer.resolvedWeightDecay(), 0.01);
  ASSERT_TRUE(back.optimizer.schedule.has_value());
  EXPECT_EQ(back.optimizer.schedule->str(), s.str());
}

TEST(TrainingConfig, OutputsTravelThroughTheTrainStepOptions) {
  TrainingConfig c;
  OutputTraining label, value;
  label.name = "class";
  label.loss.kind = LossKind::CategoricalCrossentropy;
  label.loss.fromLogits = true;
  label.metrics = {"accuracy", "categorical_accuracy"};
  value.name = "value";
  value.loss.kind = LossKind::MeanSquaredError;
  value.lossWeight = 1.0 / 3.0; // every digit must survive
  c.outputs = {label, value};
  EXPECT_EQ(c.resultNames(), (std::vector<std::string>{
                                 "class_loss", "value_loss", "class_accuracy",
                                 "class_categorical_accuracy"}));
  std::vector<std::string> storage;
  KcBuildTrainStepOptions options = toTrainStepOptions(c, storage);
  TrainingConfig back = llvm::cantFail(fromTrainStepOptions(options));
  ASSERT_EQ(back.outputs.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(back.outputs[k].name, c.outputs[k].name);
    EXPECT_EQ(back.outputs[k].loss.kind, c.outputs[k].loss.kind);
    EXPECT_EQ(back.outputs[k].loss.fromLogits, c.outputs[k].loss.fromLogits);
    EXPECT_EQ(back.outputs[k].lossWeight, c.outputs[k].lossWeight);
    EXPECT_EQ(back.outputs[k].metrics, c.outputs[k].metrics);
  }
}

TEST(TrainingConfig, OutputsAreValidated) {
  auto errorWith = [](std::vector<OutputTraining> outputs) {
    TrainingConfig c;
    c.outputs = std::move(outputs);
    return errorOf(c.validate());
  };
  OutputTraining a, b;
  a.name = "a";
  b.name = "b";
  EXPECT_EQ(errorWith({a, b}), "");
  EXPECT_EQ(errorWith({a}), "outputs: one output trains with `loss` and "
                            "`metrics`; per-output entries are for models "
                            "with several");
  EXPECT_EQ(errorWith({a, a}), "outputs: output 'a' is given twice");
  OutputTraining bad = b;
  bad.name = "b:c";
  EXPECT_EQ(errorWith({a, bad}),
            "outputs: output name 'b:c' must be non-empty and contain no ':'");
  bad = b;
  bad.lossWeight = NAN;
  EXPECT_EQ(errorWith({a, bad}),
            "loss_weights: the weight of output 'b' must be finite, got nan");
  bad = b;
  bad.loss.kind = LossKind::MeanSquaredError;
  bad.metrics = {"accuracy"};
  EXPECT_EQ(errorWith({a, bad}).substr(0, 40),
            "output 'b': unknown metric 'accuracy' fo");
  TrainingConfig weighted;
  weighted.outputs = {a, b};
  weighted.classWeight = {{0, 2.0}};
  EXPECT_EQ(errorOf(weighted.validate()),
            "class_weight is not supported for a model with several outputs "
            "(as in Keras); give sample weights instead");
  EXPECT_EQ(errorOf(OutputTraining::parse("a:mse")),
            "output 'a:mse' is not NAME:LOSS:WEIGHT:FROM_LOGITS[:METRIC...]");
  EXPECT_EQ(errorOf(OutputTraining::parse("a:mse:1:2")),
            "output 'a': from_logits must be 0 or 1");
}

} // namespace
