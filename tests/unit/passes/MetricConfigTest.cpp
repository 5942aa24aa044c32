//===- MetricConfigTest.cpp - Keras metrics as plain data -----------------===//
//
// MetricConfig's text form (parse, str, the log name), the Keras compile
// config's metric objects (metricFromKeras) and metricResult's formulas on
// hand-made statistics, edge cases included: Keras's divide_no_nan gives 0
// where a count is 0. tests/e2e/StatefulMetricParityTest.cpp checks the
// formulas against values Keras computed.
//
//===----------------------------------------------------------------------===//

#include "config/MetricConfig.h"
#include "config/TrainingConfig.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

using namespace kcc;

namespace {

MetricConfig parsed(llvm::StringRef text,
                    LossKind loss = LossKind::BinaryCrossentropy) {
  llvm::Expected<MetricConfig> m = MetricConfig::parse(text, loss);
  if (!m) {
    ADD_FAILURE() << text.str() << ": " << llvm::toString(m.takeError());
    return {};
  }
  return *m;
}

std::string errorOf(llvm::StringRef text,
                    LossKind loss = LossKind::BinaryCrossentropy) {
  llvm::Expected<MetricConfig> m = MetricConfig::parse(text, loss);
  if (m)
    return "";
  return llvm::toString(m.takeError());
}

TEST(MetricConfig, ParsesClassesAndArgumentsAndRoundTrips) {
  MetricConfig auc = parsed("AUC(num_thresholds=50,curve=PR,"
                            "summation_method=minoring,name=auc_1)");
  EXPECT_EQ(auc.kind, MetricKind::AUC);
  EXPECT_EQ(auc.numThresholds, 50);
  EXPECT_EQ(auc.curve, AucCurve::PR);
  EXPECT_EQ(auc.summation, AucSummation::Minoring);
  EXPECT_EQ(auc.logName(), "auc_1");
  EXPECT_EQ(auc.str(), "AUC(num_thresholds=50,curve=PR,"
                       "summation_method=minoring,name=auc_1)");
  for (llvm::StringRef text :
       {"Precision(thresholds=[0.3],top_k=2,class_id=1)",
        "AUC(thresholds=[0.2,0.5],multi_label=true,from_logits=true)",
        "PrecisionAtRecall(recall=0.5,num_thresholds=10,class_id=0)",
        "F1Score(average=macro,threshold=0.5)",
        "FBetaScore(average=weighted,beta=2)",
        "MeanIoU(num_classes=3,ignore_class=0,sparse_y_pred=false)",
        "BinaryIoU(target_class_ids=[1],threshold=0.4)",
        "OneHotIoU(num_classes=4,target_class_ids=[0,2])",
        "R2Score(class_aggregation=variance_weighted_average,"
        "num_regressors=2)",
        "TopKCategoricalAccuracy(k=2,name=top_2)"})
    EXPECT_EQ(parsed(text, LossKind::CategoricalCrossentropy).str(), text);
  // Bare names log as written, class names too (as Keras logs compile()'s
  // strings), a class with arguments as the class's default name.
  EXPECT_EQ(parsed("auc").logName(), "auc");
  EXPECT_EQ(parsed("AUC").logName(), "AUC");
  EXPECT_EQ(parsed("Precision").str(), "Precision");
  EXPECT_EQ(parsed("MeanIoU(num_classes=2)").logName(), "mean_io_u");
  EXPECT_EQ(parsed("RootMeanSquaredError()").logName(),
            "root_mean_squared_error");
}

TEST(MetricConfig, LogNamesOfTheTextForm) {
  EXPECT_EQ(metricLogName("AUC(num_thresholds=50,name=auc_1)"), "auc_1");
  EXPECT_EQ(metricLogName("AUC(num_thresholds=50)"), "auc");
  EXPECT_EQ(metricLogName("SparseTopKCategoricalAccuracy(k=3)"),
            "sparse_top_k_categorical_accuracy");
  EXPECT_EQ(metricLogName("R2Score"), "R2Score");
  EXPECT_EQ(metricLogName("R2Score()"), "r2_score");
  EXPECT_EQ(metricLogName("acc"), "acc");
  EXPECT_EQ(metricLogName("MyPackage>my_metric"), "my_metric");
  TrainingConfig c;
  c.loss.kind = LossKind::BinaryCrossentropy;
  c.metrics = {"accuracy", "Precision(thresholds=[0.3],name=p03)", "AUC",
               "AUC(curve=PR)"};
  EXPECT_EQ(c.resultNames(),
            (std::vector<std::string>{"accuracy", "p03", "AUC", "auc"}));
  EXPECT_FALSE(bool(c.validate()));
}

TEST(MetricConfig, RefusesWhatKerasRefuses) {
  EXPECT_NE(errorOf("AUC(curve=XY)").find("curve must be ROC, PR or PRGAIN"),
            std::string::npos);
  EXPECT_NE(errorOf("Precision(top=2)").find("takes no argument 'top'"),
            std::string::npos);
  EXPECT_NE(errorOf("PrecisionAtRecall(recall=1.5)").find("in [0, 1]"),
            std::string::npos);
  EXPECT_NE(errorOf("F1Score(beta=2)").find("takes no argument 'beta'"),
            std::string::npos);
  EXPECT_NE(errorOf("FBetaScore(beta=0)").find("beta must be > 0"),
            std::string::npos);
  EXPECT_NE(errorOf("MeanIoU").find("num_classes must be given"),
            std::string::npos);
  EXPECT_NE(
      errorOf("IoU(num_classes=2,target_class_ids=[2])").find("out of range"),
      std::string::npos);
  // The target's form: a confusion metric needs the prediction's shape.
  EXPECT_NE(errorOf("AUC", LossKind::SparseCategoricalCrossentropy)
                .find("needs targets of the prediction's shape"),
            std::string::npos);
  // MeanIoU's sparse targets are either form.
  EXPECT_EQ(errorOf("MeanIoU(num_classes=3,sparse_y_pred=false)",
                    LossKind::SparseCategoricalCrossentropy),
            "");
}

TEST(MetricConfig, ThresholdsAsKerasResolvesThem) {
  MetricConfig auc = parsed("AUC(num_thresholds=4)");
  std::vector<double> t = auc.resolvedThresholds();
  ASSERT_EQ(t.size(), 4u);
  EXPECT_DOUBLE_EQ(t[0], -1e-7);
  EXPECT_DOUBLE_EQ(t[1], 1.0 / 3);
  EXPECT_DOUBLE_EQ(t[3], 1 + 1e-7);
  EXPECT_TRUE(auc.thresholdsEvenlyDistributed());
  EXPECT_TRUE(auc.thresholdsWithEpsilon());
  EXPECT_FALSE(
      parsed("AUC(thresholds=[0.3,0.5])").thresholdsEvenlyDistributed());
  EXPECT_TRUE(parsed("AUC(thresholds=[0.5])").thresholdsEvenlyDistributed());
  MetricConfig at = parsed("SensitivityAtSpecificity(specificity=0.5,"
                           "num_thresholds=3)");
  EXPECT_EQ(at.resolvedThresholds(), (std::vector<double>{0.0, 0.5, 1.0}));
  EXPECT_FALSE(at.thresholdsWithEpsilon());
  EXPECT_EQ(parsed("Precision(top_k=1)").resolvedThresholds(),
            (std::vector<double>{kMetricNegInf}));
}

TEST(MetricConfig, ResultsOnStatistics) {
  // [tp, fp, tn, fn] at one threshold.
  MetricConfig precision = parsed("Precision");
  EXPECT_DOUBLE_EQ(metricResult(precision, {3, 1, 5, 2}), 0.75);
  EXPECT_EQ(metricResult(precision, {0, 0, 5, 2}), 0.0); // divide_no_nan
  EXPECT_DOUBLE_EQ(metricResult(parsed("Recall"), {3, 1, 5, 2}), 0.6);
  EXPECT_EQ(metricResult(parsed("Recall"), {0, 1, 5, 0}), 0.0);
  EXPECT_EQ(metricResult(parsed("FalseNegatives"), {3, 1, 5, 2}), 2.0);
  // AUC over 3 thresholds: a perfect ranking, then no positives at all.
  MetricConfig auc = parsed("AUC(num_thresholds=3)");
  EXPECT_DOUBLE_EQ(metricResult(auc, {2, 2, 0, 2, 0, 0, 0, 2, 2, 0, 0, 2}),
                   1.0);
  EXPECT_EQ(metricResult(auc, {0, 0, 0, 4, 1, 0, 0, 3, 4, 0, 0, 0}), 0.0);
  // RMSE: [sum of per-example mean squared errors, examples].
  EXPECT_DOUBLE_EQ(metricResult(parsed("RootMeanSquaredError"), {8, 2}), 2.0);
  EXPECT_EQ(metricResult(parsed("RootMeanSquaredError"), {0, 0}), 0.0);
  // MeanIoU of a 2x2 matrix [[2, 1], [0, 3]]: (2/3 + 3/4) / 2.
  MetricConfig iou = parsed("MeanIoU(num_classes=2)");
  EXPECT_NEAR(metricResult(iou, {2, 1, 0, 3}), (2.0 / 3 + 0.75) / 2, 1e-6);
  // A class absent from both rows and columns does not count.
  MetricConfig iou3 = parsed("MeanIoU(num_classes=3)");
  EXPECT_NEAR(metricResult(iou3, {2, 1, 0, 0, 3, 0, 0, 0, 0}),
              (2.0 / 3 + 0.75) / 2, 1e-6);
}

TEST(MetricConfig, ListResults) {
  // Several thresholds: a value per threshold, in the order given; one
  // threshold (even as a list) stays a number, as in Keras.
  MetricConfig p = parsed("Precision(thresholds=[0.7,0.3])");
  EXPECT_TRUE(p.listResult());
  EXPECT_FALSE(parsed("Precision(thresholds=[0.7])").listResult());
  EXPECT_FALSE(parsed("Precision").listResult());
  // [tp x2, fp x2, tn x2, fn x2].
  EXPECT_EQ(metricValues(p, {1, 4, 1, 2, 6, 5, 3, 0}),
            (std::vector<double>{0.5, 4.0 / 6}));
  EXPECT_EQ(metricValues(parsed("TruePositives(thresholds=[0.7,0.3])"),
                         {1, 4, 1, 2, 6, 5, 3, 0}),
            (std::vector<double>{1, 4}));
  EXPECT_EQ(metricValues(parsed("Recall(thresholds=[0.7,0.3])"),
                         {1, 4, 1, 2, 6, 5, 3, 0}),
            (std::vector<double>{0.25, 1.0}));
  // Its one number (StepResult::metrics): the mean, as Keras's bar shows.
  EXPECT_DOUBLE_EQ(metricResult(p, {1, 4, 1, 2, 6, 5, 3, 0}),
                   (0.5 + 4.0 / 6) / 2);
  // F1Score with average=None (the default): a score per class from
  // [tp, fp, fn, support] per class.
  MetricConfig f1 = parsed("F1Score");
  EXPECT_TRUE(f1.listResult());
  std::vector<double> f = metricValues(f1, {2, 0, 1, 1, 0, 3, 2, 3});
  ASSERT_EQ(f.size(), 2u);
  // Class 0: precision 2/3, recall 1.
  EXPECT_NEAR(f[0], 0.8, 1e-6);
  EXPECT_NEAR(f[1], 0.0, 1e-6);
  EXPECT_FALSE(parsed("F1Score(average=macro)").listResult());
  // R2Score with class_aggregation=None: a value per column from [sum x2,
  // squared sum x2, residual x2, count x2, samples].
  MetricConfig r2 =
      parsed("R2Score(class_aggregation=None)", LossKind::MeanSquaredError);
  EXPECT_TRUE(r2.listResult());
  std::vector<double> r = metricValues(r2, {2, 0, 6, 8, 1, 4, 2, 2, 2});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_DOUBLE_EQ(r[0], 1 - 1.0 / (6 - 2));
  EXPECT_DOUBLE_EQ(r[1], 1 - 4.0 / 8);
}

TEST(MetricConfig, FromKerasObjects) {
  auto fromJson = [](llvm::StringRef cls, llvm::StringRef config) {
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(config);
    EXPECT_TRUE(bool(v));
    llvm::Expected<std::string> text = metricFromKeras(cls, v->getAsObject());
    return text ? *text : "error: " + llvm::toString(text.takeError());
  };
  EXPECT_EQ(fromJson("AUC", R"({"name": "auc_1", "dtype": "float32",
      "num_thresholds": 200, "curve": "PR", "summation_method":
      "interpolation", "multi_label": false, "num_labels": null,
      "label_weights": null, "from_logits": false})"),
            "AUC(curve=PR,name=auc_1)");
  EXPECT_EQ(fromJson("AUC", R"({"name": "auc", "num_thresholds": 200})"),
            "auc");
  // average=None, F1Score's default: a score per class.
  EXPECT_EQ(fromJson("F1Score", R"({"name": "f1_score", "average": null})"),
            "f1_score");
  EXPECT_EQ(fromJson("R2Score", R"({"name": "r2", "class_aggregation": null,
      "num_regressors": 0})"),
            "R2Score(class_aggregation=None,name=r2)");
  EXPECT_EQ(fromJson("Precision", R"({"name": "precision", "thresholds":
      [0.3, 0.5, 0.7], "top_k": null, "class_id": null})"),
            "Precision(thresholds=[0.3,0.5,0.7])");
  // A mean metric at its defaults and default name keeps its bare name.
  EXPECT_EQ(fromJson("MeanSquaredError",
                     R"({"name": "mean_squared_error", "dtype": "float32"})"),
            "mean_squared_error");
  EXPECT_EQ(
      fromJson("MeanSquaredError", R"({"name": "mse_1", "dtype": "float32"})"),
      "MeanSquaredError(name=mse_1)");
  EXPECT_EQ(fromJson("TopKCategoricalAccuracy",
                     R"({"name": "top_k_categorical_accuracy", "k": 3})"),
            "TopKCategoricalAccuracy(k=3)");
  EXPECT_NE(fromJson("CategoricalCrossentropy",
                     R"({"name": "cce", "from_logits": true})")
                .find("not supported yet"),
            std::string::npos);
}

} // namespace
