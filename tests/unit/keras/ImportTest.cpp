//===- ImportTest.cpp - Keras specs trace to the C++ API's IR -------------===//
//
// One way into the IR: the same model given as Keras 3 to_json, a .keras
// archive, Keras 2 to_json (current and pre-2.13 layouts), a legacy .h5 or
// written with kcc's C++ API must trace to the identical module, layer
// names (locations) included.
//
//===----------------------------------------------------------------------===//

#include "frontend/models/ReferenceModels.h"
#include "tests/unit/keras/KerasTestUtil.h"

using namespace kcc;
using namespace kcc::keras_test;

namespace {

std::string importJsonIR(const std::string &name) {
  keras::ImportedModel m = keras::importModelJson(readText(name), name);
  return traceText(*m.model);
}

TEST(KerasImport, MlpAllFormatsTraceToTheCppModel) {
  std::string cpp = traceText(*models::buildMlp(0));
  EXPECT_NE(cpp.find("loc(\"dense_2\")"), std::string::npos);
  EXPECT_EQ(importJsonIR("mlp_keras3.json"), cpp);
  EXPECT_EQ(importJsonIR("mlp_keras2.json"), cpp);
  EXPECT_EQ(importJsonIR("mlp_keras2_pre213.json"), cpp);
  keras::ImportedModel archive =
      keras::importKerasArchive(fixture("mlp.keras"));
  EXPECT_TRUE(archive.weightsLoaded);
  EXPECT_EQ(archive.kerasVersion, "3.15.1");
  EXPECT_EQ(traceText(*archive.model), cpp);
  EXPECT_EQ(traceText(*keras::importKerasH5(fixture("mlp_keras2.h5")).model),
            cpp);
  EXPECT_EQ(traceText(*keras::importFile(fixture("mlp_legacy.h5")).model), cpp);
}

TEST(KerasImport, FunctionalMlpTracesLikeSequential) {
  EXPECT_EQ(importJsonIR("mlp_functional_keras3.json"),
            traceText(*models::buildMlp(0)));
}

TEST(KerasImport, CnnKeras3AndKeras2MatchCpp) {
  std::string cpp = traceText(*models::buildCnn(0));
  EXPECT_EQ(importJsonIR("cnn_keras3.json"), cpp);
  EXPECT_EQ(importJsonIR("cnn_keras2.json"), cpp);
  EXPECT_EQ(traceText(*keras::importFile(fixture("cnn.keras")).model), cpp);
}

TEST(KerasImport, ResidualKeras3AndKeras2MatchCpp) {
  std::string cpp = traceText(*models::buildResidual(0));
  EXPECT_NE(cpp.find("loc(\"add\")"), std::string::npos);
  EXPECT_EQ(importJsonIR("residual_keras3.json"), cpp);
  EXPECT_EQ(importJsonIR("residual_keras2.json"), cpp);
  keras::ImportedModel m = keras::importFile(fixture("residual.keras"));
  EXPECT_EQ(traceText(*m.model), cpp);
  EXPECT_EQ(m.specLayerOrder,
            (std::vector<std::string>{"flatten", "dense", "dense_1", "dense_2",
                                      "add", "dense_3"}));
}

TEST(KerasImport, LayerNamesShapesAndVersions) {
  keras::ImportedModel m =
      keras::importModelJson(readText("cnn_keras3.json"), "cnn_keras3.json");
  EXPECT_EQ(m.kerasMajorVersion, 3);
  EXPECT_EQ(m.model->name(), "cnn");
  std::vector<std::string> names;
  for (const Layer &l : m.model->layers())
    names.push_back(l.name());
  EXPECT_EQ(names, (std::vector<std::string>{"conv2d", "max_pooling2d",
                                             "conv2d_1", "max_pooling2d_1",
                                             "flatten", "dense", "dense_1"}));
  EXPECT_EQ(m.model->inputShapes(), (std::vector<Shape>{{28, 28, 1}}));
  int64_t count = 0;
  for (const Parameter &p : m.model->parameters())
    count += p.value.numel();
  EXPECT_EQ(count, 225034); // Keras's model.count_params().
  keras::ImportedModel k2 =
      keras::importModelJson(readText("cnn_keras2.json"), "cnn_keras2.json");
  EXPECT_EQ(k2.kerasMajorVersion, 2);
  EXPECT_EQ(k2.kerasVersion, "2.21.0");
}

TEST(KerasImport, CompileConfigOfArchiveAndLegacyH5) {
  keras::ImportedModel cnn = keras::importFile(fixture("cnn.keras"));
  ASSERT_TRUE(cnn.training.has_value());
  EXPECT_EQ(cnn.trainingError, "");
  const OptimizerConfig &opt = cnn.training->optimizer;
  EXPECT_EQ(opt.kind, OptimizerKind::Adam);
  EXPECT_NEAR(*opt.learningRate, 1e-3, 1e-9);
  EXPECT_DOUBLE_EQ(opt.beta1, 0.9);
  EXPECT_DOUBLE_EQ(opt.resolvedBeta2(), 0.999);
  EXPECT_DOUBLE_EQ(opt.epsilon, 1e-7);
  EXPECT_EQ(cnn.training->loss.kind, LossKind::SparseCategoricalCrossentropy);
  EXPECT_TRUE(cnn.training->loss.fromLogits);
  EXPECT_EQ(cnn.training->metrics, std::vector<std::string>{"accuracy"});

  keras::ImportedModel mlp = keras::importFile(fixture("mlp.keras"));
  ASSERT_TRUE(mlp.training.has_value());
  EXPECT_FALSE(mlp.training->loss.fromLogits);

  // tf.keras writes training_config with "Custom>Adam" and a metric object.
  keras::ImportedModel k2 = keras::importFile(fixture("mlp_keras2.h5"));
  ASSERT_TRUE(k2.training.has_value());
  EXPECT_EQ(k2.training->optimizer.kind, OptimizerKind::Adam);
  EXPECT_NEAR(*k2.training->optimizer.learningRate, 1e-3, 1e-9);
  EXPECT_EQ(k2.training->loss.kind, LossKind::SparseCategoricalCrossentropy);
  EXPECT_EQ(k2.training->metrics, std::vector<std::string>{"accuracy"});
  EXPECT_EQ(k2.kerasMajorVersion, 2);

  // Plain to_json of an uncompiled model: no compile_config.
  EXPECT_FALSE(keras::importModelJson(readText("residual_keras3.json"))
                   .training.has_value());
}

TEST(KerasImport, UntrainableCompileConfigIsADeferredError) {
  // An optimizer and a loss kcc cannot train with: the model still imports
  // (for inference); the first problem is kept for when training is asked.
  std::string spec = R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}},
    {"class_name": "Dense", "config": {"units": 2}}]},
    "compile_config": {"optimizer": {"class_name": "Ftrl", "config": {}},
                       "loss": "not_a_loss"}})";
  keras::ImportedModel m = keras::importModelJson(spec, "spec.json");
  ASSERT_TRUE(m.model);
  ASSERT_TRUE(m.training.has_value());
  EXPECT_EQ(m.trainingError,
            "spec.json: $.compile_config.optimizer: compile_config: unknown "
            "optimizer 'ftrl' (expected sgd, adam, rmsprop, adamw, adagrad, "
            "nadam, adamax, lion)");

  spec.replace(spec.find("Ftrl"), 4, "SGD");
  m = keras::importModelJson(spec, "spec.json");
  EXPECT_EQ(m.training->optimizer.kind, OptimizerKind::SGD);
  EXPECT_NE(m.trainingError.find("$.compile_config.loss: compile_config: "
                                 "unknown loss 'not_a_loss' (expected "),
            std::string::npos)
      << m.trainingError;
}

TEST(KerasImport, MetricObjectsAndCustomLossesAndMetrics) {
  // The forms Keras 3 writes: a name, a metric object, a registered
  // function (Python code, kept by name so validate() names it).
  std::string spec = R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}},
    {"class_name": "Dense", "config": {"units": 2}}]},
    "compile_config": {"loss": "categorical_crossentropy", "metrics": [
      "top_k_categorical_accuracy",
      {"module": "keras.metrics", "class_name": "MeanAbsoluteError",
       "config": {"name": "mean_absolute_error", "dtype": "float32"},
       "registered_name": null},
      {"module": "keras.metrics", "class_name": "TopKCategoricalAccuracy",
       "config": {"name": "top_k_categorical_accuracy", "dtype": "float32",
                  "k": 5},
       "registered_name": null},
      {"module": "builtins", "class_name": "function",
       "config": "MyPackage>my_metric", "registered_name": "function"}]}})";
  keras::ImportedModel m = keras::importModelJson(spec, "spec.json");
  ASSERT_EQ(m.trainingError, "");
  EXPECT_EQ(m.training->metrics,
            (std::vector<std::string>{
                "top_k_categorical_accuracy", "mean_absolute_error",
                "top_k_categorical_accuracy", "MyPackage>my_metric"}));
  llvm::Error err = m.training->validate();
  std::string msg = llvm::toString(std::move(err));
  EXPECT_NE(msg.find("custom metric 'MyPackage>my_metric' is Python code, "
                     "which kcc cannot run; give built-in ones with "
                     "--metrics, or from C++ supply it in "
                     "kcc::CompileOptions::customObjects"),
            std::string::npos)
      << msg;
  // --metrics (TrainingConfig::metrics) replaces it.
  m.training->metrics.pop_back();
  EXPECT_EQ(llvm::toString(m.training->validate()), "");

  // A metric object with arguments is read by class, its arguments kept:
  // k other than Keras's default, an instance name.
  m = keras::importModelJson(
      keras_test::replaceOnce(
          keras_test::replaceOnce(spec, "\"k\": 5", "\"k\": 3"),
          "\"name\": \"mean_absolute_error\"", "\"name\": \"mae_1\""),
      "spec.json");
  ASSERT_EQ(m.trainingError, "");
  EXPECT_EQ(m.training->metrics[1], "MeanAbsoluteError(name=mae_1)");
  EXPECT_EQ(m.training->metrics[2], "TopKCategoricalAccuracy(k=3)");
  EXPECT_EQ(metricLogName(m.training->metrics[1]), "mae_1");

  // A custom loss (a registered class, a registered function) is a
  // deferred error naming it and what replaces it.
  for (const char *loss :
       {R"({"module": null, "class_name": "MyLoss", "config": {"name":
            "my_loss", "reduction": "sum_over_batch_size"},
            "registered_name": "MyPackage>MyLoss"})",
        R"({"module": "builtins", "class_name": "function", "config":
            "MyPackage>MyLoss", "registered_name": "function"})"}) {
    m = keras::importModelJson(
        keras_test::replaceOnce(spec, "\"categorical_crossentropy\"", loss),
        "spec.json");
    ASSERT_TRUE(m.model);
    EXPECT_TRUE(m.trainingErrorIsCustomLoss);
    EXPECT_EQ(m.trainingError,
              "spec.json: $.compile_config.loss: compile_config: custom loss "
              "'MyPackage>MyLoss' is Python code, which kcc cannot run; give "
              "a built-in loss with --loss (sparse_categorical_crossentropy, "
              "categorical_crossentropy, binary_crossentropy, "
              "mean_squared_error, mean_absolute_error, "
              "mean_absolute_percentage_error, "
              "mean_squared_logarithmic_error, huber, log_cosh, poisson, "
              "kl_divergence, cosine_similarity, hinge, squared_hinge, "
              "categorical_hinge, binary_focal_crossentropy, "
              "categorical_focal_crossentropy, dice, tversky, ctc, "
              "categorical_generalized_cross_entropy, circle), or from C++ "
              "supply it in "
              "kcc::CompileOptions::customObjects");
    // Kept by name, so C++ can supply it.
    EXPECT_EQ(m.training->loss.custom, "MyPackage>MyLoss");
  }
}

TEST(KerasImport, OptimizerScheduleDecayAndClippingFromCompileConfig) {
  std::string spec = R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}},
    {"class_name": "Dense", "config": {"units": 2}}]},
    "compile_config": {"loss": "mse", "optimizer": {
      "module": "keras.optimizers", "class_name": "Lion", "config": {
        "name": "lion", "weight_decay": 0.1, "clipnorm": null,
        "global_clipnorm": 2.0, "clipvalue": null, "beta_1": 0.8,
        "beta_2": 0.95, "learning_rate": {
          "module": "keras.optimizers.schedules",
          "class_name": "PolynomialDecay", "config": {
            "initial_learning_rate": 0.1, "decay_steps": 10,
            "end_learning_rate": 0.01, "power": 2.0, "cycle": true,
            "name": "PolynomialDecay"}, "registered_name": null}},
      "registered_name": null}}})";
  keras::ImportedModel m = keras::importModelJson(spec, "spec.json");
  ASSERT_EQ(m.trainingError, "");
  const OptimizerConfig &opt = m.training->optimizer;
  EXPECT_EQ(opt.kind, OptimizerKind::Lion);
  EXPECT_DOUBLE_EQ(opt.resolvedWeightDecay(), 0.1);
  EXPECT_DOUBLE_EQ(opt.globalClipnorm, 2.0);
  EXPECT_DOUBLE_EQ(opt.clipnorm, 0.0);
  EXPECT_DOUBLE_EQ(opt.resolvedBeta2(), 0.95);
  ASSERT_TRUE(opt.schedule.has_value());
  EXPECT_EQ(opt.schedule->str(),
            "PolynomialDecay(initial_learning_rate=0.1,decay_steps=10,"
            "end_learning_rate=0.01,power=2,cycle=true)");

  // What kcc cannot train with is deferred, naming the field.
  std::string ema = spec;
  ema.replace(ema.find("\"weight_decay\""), 0, "\"use_ema\": true, ");
  m = keras::importModelJson(ema, "spec.json");
  EXPECT_EQ(m.trainingError,
            "spec.json: $.compile_config.optimizer.config.use_ema: "
            "compile_config: use_ema is not supported");
  std::string unknown = spec;
  unknown.replace(unknown.find("PolynomialDecay"), 15, "StepDecay");
  m = keras::importModelJson(unknown, "spec.json");
  EXPECT_NE(m.trainingError.find("learning_rate.class_name: compile_config: "
                                 "unknown learning-rate schedule 'StepDecay'"),
            std::string::npos)
      << m.trainingError;
}

TEST(KerasImport, DefaultsForMissingOptionalKeys) {
  // A hand-written minimal Keras 3 spec: only required keys.
  std::string spec = R"({"class_name": "Sequential", "config": {"layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 6, 6, 3]}},
    {"class_name": "Conv2D", "config": {"filters": 4, "kernel_size": 3}},
    {"class_name": "MaxPooling2D", "config": {}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dropout", "config": {"rate": 0.5}},
    {"class_name": "Dense", "config": {"units": 2, "unknown_key": [1, 2]}}]}})";
  keras::ImportedModel m = keras::importModelJson(spec, "minimal.json");
  Sequential cpp({Input({6, 6, 3}), Conv2D(4, 3), MaxPooling2D(), Flatten(),
                  Dropout(0.5), Dense(2)},
                 "sequential");
  EXPECT_EQ(traceText(*m.model), traceText(cpp));
}

} // namespace
