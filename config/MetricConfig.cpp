//===- MetricConfig.cpp - A Keras metric and its arguments ----------------===//
//
// The metric names Keras accepts, the argument parser and text form, the
// constructor checks, and each stateful metric's result() formula on its
// summed statistics.
//
//===----------------------------------------------------------------------===//

#include "config/MetricConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace kcc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// Keras's backend.epsilon().
constexpr double kEpsilon = 1e-7;

std::string formatExact(double v) {
  char text[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, v);
    if (std::strtod(text, nullptr) == v)
      break;
  }
  return text;
}

std::optional<bool> parseBool(llvm::StringRef v) {
  if (v == "true" || v == "True" || v == "1")
    return true;
  if (v == "false" || v == "False" || v == "0")
    return false;
  return std::nullopt;
}

bool isNone(llvm::StringRef v) {
  return v == "None" || v == "none" || v == "null";
}

std::optional<double> parseDouble(llvm::StringRef v) {
  std::string s = v.trim().str();
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (*end != '\0')
    return std::nullopt;
  return d;
}

std::optional<int64_t> parseInt(llvm::StringRef v) {
  std::optional<double> d = parseDouble(v);
  if (!d || *d != std::floor(*d) || std::abs(*d) > 1e15)
    return std::nullopt;
  return static_cast<int64_t>(*d);
}

/// `a,b,c` split at commas outside brackets and parentheses.
llvm::SmallVector<llvm::StringRef> splitTopLevel(llvm::StringRef s) {
  llvm::SmallVector<llvm::StringRef> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '[' || c == '(')
      ++depth;
    else if (c == ']' || c == ')')
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (!s.slice(start, s.size()).trim().empty())
    out.push_back(s.slice(start, s.size()).trim());
  return out;
}

/// `[0.3,0.7]`, `(0, 1)` or one number.
std::optional<std::vector<double>> parseList(llvm::StringRef v) {
  v = v.trim();
  std::vector<double> out;
  if ((v.starts_with("[") && v.ends_with("]")) ||
      (v.starts_with("(") && v.ends_with(")"))) {
    for (llvm::StringRef item : splitTopLevel(v.drop_front().drop_back())) {
      std::optional<double> d = parseDouble(item);
      if (!d)
        return std::nullopt;
      out.push_back(*d);
    }
    return out;
  }
  std::optional<double> d = parseDouble(v);
  if (!d)
    return std::nullopt;
  out.push_back(*d);
  return out;
}

std::string formatList(llvm::ArrayRef<double> v) {
  std::string out = "[";
  for (auto [i, d] : llvm::enumerate(v))
    out += (i ? "," : "") + formatExact(d);
  return out + "]";
}

struct NamedKind {
  const char *name;
  MetricKind kind;
};

/// Every stateful class, for the name table and the error's list.
constexpr MetricKind kStateful[] = {
    MetricKind::TruePositives,
    MetricKind::FalsePositives,
    MetricKind::TrueNegatives,
    MetricKind::FalseNegatives,
    MetricKind::Precision,
    MetricKind::Recall,
    MetricKind::AUC,
    MetricKind::PrecisionAtRecall,
    MetricKind::RecallAtPrecision,
    MetricKind::SensitivityAtSpecificity,
    MetricKind::SpecificityAtSensitivity,
    MetricKind::FBetaScore,
    MetricKind::F1Score,
    MetricKind::IoU,
    MetricKind::MeanIoU,
    MetricKind::BinaryIoU,
    MetricKind::OneHotIoU,
    MetricKind::OneHotMeanIoU,
    MetricKind::R2Score,
    MetricKind::RootMeanSquaredError,
};

/// The bare names of the mean metrics (keras.metrics.get's function names
/// and aliases) and their classes.
constexpr NamedKind kMeanNames[] = {
    {"sparse_categorical_accuracy", MetricKind::SparseCategoricalAccuracy},
    {"SparseCategoricalAccuracy", MetricKind::SparseCategoricalAccuracy},
    {"categorical_accuracy", MetricKind::CategoricalAccuracy},
    {"CategoricalAccuracy", MetricKind::CategoricalAccuracy},
    {"binary_accuracy", MetricKind::BinaryAccuracy},
    {"BinaryAccuracy", MetricKind::BinaryAccuracy},
    {"top_k_categorical_accuracy", MetricKind::TopKCategoricalAccuracy},
    {"TopKCategoricalAccuracy", MetricKind::TopKCategoricalAccuracy},
    {"sparse_top_k_categorical_accuracy",
     MetricKind::SparseTopKCategoricalAccuracy},
    {"SparseTopKCategoricalAccuracy",
     MetricKind::SparseTopKCategoricalAccuracy},
    {"mae", MetricKind::MeanAbsoluteError},
    {"mean_absolute_error", MetricKind::MeanAbsoluteError},
    {"MeanAbsoluteError", MetricKind::MeanAbsoluteError},
    {"mse", MetricKind::MeanSquaredError},
    {"mean_squared_error", MetricKind::MeanSquaredError},
    {"MeanSquaredError", MetricKind::MeanSquaredError},
    {"mape", MetricKind::MeanAbsolutePercentageError},
    {"mean_absolute_percentage_error", MetricKind::MeanAbsolutePercentageError},
    {"MeanAbsolutePercentageError", MetricKind::MeanAbsolutePercentageError},
    {"msle", MetricKind::MeanSquaredLogarithmicError},
    {"mean_squared_logarithmic_error", MetricKind::MeanSquaredLogarithmicError},
    {"MeanSquaredLogarithmicError", MetricKind::MeanSquaredLogarithmicError},
    {"logcosh", MetricKind::LogCoshError},
    {"LogCoshError", MetricKind::LogCoshError},
    {"cosine_similarity", MetricKind::CosineSimilarity},
    {"CosineSimilarity", MetricKind::CosineSimilarity},
    {"kl_divergence", MetricKind::KLDivergence},
    {"KLDivergence", MetricKind::KLDivergence},
    {"poisson", MetricKind::Poisson},
    {"Poisson", MetricKind::Poisson},
    {"hinge", MetricKind::Hinge},
    {"Hinge", MetricKind::Hinge},
    {"squared_hinge", MetricKind::SquaredHinge},
    {"SquaredHinge", MetricKind::SquaredHinge},
    {"categorical_hinge", MetricKind::CategoricalHinge},
    {"CategoricalHinge", MetricKind::CategoricalHinge},
    {"binary_crossentropy", MetricKind::BinaryCrossentropy},
    {"BinaryCrossentropy", MetricKind::BinaryCrossentropy},
    {"categorical_crossentropy", MetricKind::CategoricalCrossentropy},
    {"CategoricalCrossentropy", MetricKind::CategoricalCrossentropy},
    {"sparse_categorical_crossentropy",
     MetricKind::SparseCategoricalCrossentropy},
    {"SparseCategoricalCrossentropy",
     MetricKind::SparseCategoricalCrossentropy},
    {"pearson_correlation", MetricKind::PearsonCorrelation},
    {"PearsonCorrelation", MetricKind::PearsonCorrelation},
    {"concordance_correlation", MetricKind::ConcordanceCorrelation},
    {"ConcordanceCorrelation", MetricKind::ConcordanceCorrelation},
};

/// The accuracy Keras's "accuracy" means for `loss`, if it has one
/// (keras.trainers.compile_utils.get_metric).
std::optional<MetricKind> accuracyFor(LossKind loss) {
  switch (loss) {
  case LossKind::SparseCategoricalCrossentropy:
    return MetricKind::SparseCategoricalAccuracy;
  case LossKind::CategoricalCrossentropy:
  case LossKind::CategoricalFocalCrossentropy:
    return MetricKind::CategoricalAccuracy;
  case LossKind::BinaryCrossentropy:
  case LossKind::BinaryFocalCrossentropy:
    return MetricKind::BinaryAccuracy;
  case LossKind::CategoricalGeneralizedCrossEntropy:
    return MetricKind::SparseCategoricalAccuracy;
  default:
    return std::nullopt;
  }
}

std::optional<MetricKind> kindNamed(llvm::StringRef name, LossKind loss) {
  if (name == "accuracy" || name == "acc" || name == "Accuracy")
    return accuracyFor(loss);
  for (const NamedKind &n : kMeanNames)
    if (name == n.name)
      return n.kind;
  for (MetricKind k : kStateful)
    if (name == metricClassName(k) || name == metricDefaultName(k))
      return k;
  return std::nullopt;
}

bool isTopK(MetricKind k) {
  return k == MetricKind::TopKCategoricalAccuracy ||
         k == MetricKind::SparseTopKCategoricalAccuracy;
}

bool isIoU(MetricKind k) {
  return k >= MetricKind::IoU && k <= MetricKind::OneHotMeanIoU;
}

bool isAt(MetricKind k) {
  return k >= MetricKind::PrecisionAtRecall &&
         k <= MetricKind::SpecificityAtSensitivity;
}

llvm::StringRef valueArgument(MetricKind k) {
  switch (k) {
  case MetricKind::PrecisionAtRecall:
    return "recall";
  case MetricKind::RecallAtPrecision:
    return "precision";
  case MetricKind::SensitivityAtSpecificity:
    return "specificity";
  default:
    return "sensitivity";
  }
}

/// Keras's is_evenly_distributed_thresholds.
bool evenlyDistributed(llvm::ArrayRef<double> t) {
  size_t n = t.size();
  if (n < 3)
    return false;
  for (size_t i = 0; i < n; ++i) {
    double even =
        static_cast<double>(static_cast<float>(i) / static_cast<float>(n - 1));
    // np.allclose(a, b, atol=eps): |a - b| <= atol + 1e-5 |b|.
    if (!(std::abs(t[i] - even) <= kEpsilon + 1e-5 * std::abs(even)))
      return false;
  }
  return true;
}

double divideNoNan(double a, double b) { return b == 0 ? 0.0 : a / b; }

} // namespace

bool isStateful(MetricKind kind) { return kind >= MetricKind::TruePositives; }

bool isConfusionMetric(MetricKind kind) {
  return kind >= MetricKind::TruePositives &&
         kind <= MetricKind::SpecificityAtSensitivity;
}

bool takesClassIndices(MetricKind kind) {
  return kind == MetricKind::SparseCategoricalAccuracy ||
         kind == MetricKind::SparseTopKCategoricalAccuracy ||
         kind == MetricKind::SparseCategoricalCrossentropy;
}

llvm::StringRef metricClassName(MetricKind kind) {
  switch (kind) {
  case MetricKind::SparseCategoricalAccuracy:
    return "SparseCategoricalAccuracy";
  case MetricKind::CategoricalAccuracy:
    return "CategoricalAccuracy";
  case MetricKind::BinaryAccuracy:
    return "BinaryAccuracy";
  case MetricKind::TopKCategoricalAccuracy:
    return "TopKCategoricalAccuracy";
  case MetricKind::SparseTopKCategoricalAccuracy:
    return "SparseTopKCategoricalAccuracy";
  case MetricKind::MeanAbsoluteError:
    return "MeanAbsoluteError";
  case MetricKind::MeanSquaredError:
    return "MeanSquaredError";
  case MetricKind::MeanAbsolutePercentageError:
    return "MeanAbsolutePercentageError";
  case MetricKind::MeanSquaredLogarithmicError:
    return "MeanSquaredLogarithmicError";
  case MetricKind::LogCoshError:
    return "LogCoshError";
  case MetricKind::CosineSimilarity:
    return "CosineSimilarity";
  case MetricKind::KLDivergence:
    return "KLDivergence";
  case MetricKind::Poisson:
    return "Poisson";
  case MetricKind::Hinge:
    return "Hinge";
  case MetricKind::SquaredHinge:
    return "SquaredHinge";
  case MetricKind::CategoricalHinge:
    return "CategoricalHinge";
  case MetricKind::BinaryCrossentropy:
    return "BinaryCrossentropy";
  case MetricKind::CategoricalCrossentropy:
    return "CategoricalCrossentropy";
  case MetricKind::SparseCategoricalCrossentropy:
    return "SparseCategoricalCrossentropy";
  case MetricKind::PearsonCorrelation:
    return "PearsonCorrelation";
  case MetricKind::ConcordanceCorrelation:
    return "ConcordanceCorrelation";
  case MetricKind::TruePositives:
    return "TruePositives";
  case MetricKind::FalsePositives:
    return "FalsePositives";
  case MetricKind::TrueNegatives:
    return "TrueNegatives";
  case MetricKind::FalseNegatives:
    return "FalseNegatives";
  case MetricKind::Precision:
    return "Precision";
  case MetricKind::Recall:
    return "Recall";
  case MetricKind::AUC:
    return "AUC";
  case MetricKind::PrecisionAtRecall:
    return "PrecisionAtRecall";
  case MetricKind::RecallAtPrecision:
    return "RecallAtPrecision";
  case MetricKind::SensitivityAtSpecificity:
    return "SensitivityAtSpecificity";
  case MetricKind::SpecificityAtSensitivity:
    return "SpecificityAtSensitivity";
  case MetricKind::FBetaScore:
    return "FBetaScore";
  case MetricKind::F1Score:
    return "F1Score";
  case MetricKind::IoU:
    return "IoU";
  case MetricKind::MeanIoU:
    return "MeanIoU";
  case MetricKind::BinaryIoU:
    return "BinaryIoU";
  case MetricKind::OneHotIoU:
    return "OneHotIoU";
  case MetricKind::OneHotMeanIoU:
    return "OneHotMeanIoU";
  case MetricKind::R2Score:
    return "R2Score";
  case MetricKind::RootMeanSquaredError:
    return "RootMeanSquaredError";
  }
  return "";
}

llvm::StringRef metricDefaultName(MetricKind kind) {
  switch (kind) {
  case MetricKind::SparseCategoricalAccuracy:
    return "sparse_categorical_accuracy";
  case MetricKind::CategoricalAccuracy:
    return "categorical_accuracy";
  case MetricKind::BinaryAccuracy:
    return "binary_accuracy";
  case MetricKind::TopKCategoricalAccuracy:
    return "top_k_categorical_accuracy";
  case MetricKind::SparseTopKCategoricalAccuracy:
    return "sparse_top_k_categorical_accuracy";
  case MetricKind::MeanAbsoluteError:
    return "mean_absolute_error";
  case MetricKind::MeanSquaredError:
    return "mean_squared_error";
  case MetricKind::MeanAbsolutePercentageError:
    return "mean_absolute_percentage_error";
  case MetricKind::MeanSquaredLogarithmicError:
    return "mean_squared_logarithmic_error";
  case MetricKind::LogCoshError:
    return "logcosh";
  case MetricKind::CosineSimilarity:
    return "cosine_similarity";
  case MetricKind::KLDivergence:
    return "kl_divergence";
  case MetricKind::Poisson:
    return "poisson";
  case MetricKind::Hinge:
    return "hinge";
  case MetricKind::SquaredHinge:
    return "squared_hinge";
  case MetricKind::CategoricalHinge:
    return "categorical_hinge";
  case MetricKind::BinaryCrossentropy:
    return "binary_crossentropy";
  case MetricKind::CategoricalCrossentropy:
    return "categorical_crossentropy";
  case MetricKind::SparseCategoricalCrossentropy:
    return "sparse_categorical_crossentropy";
  case MetricKind::PearsonCorrelation:
    return "pearson_correlation";
  case MetricKind::ConcordanceCorrelation:
    return "concordance_correlation";
  case MetricKind::TruePositives:
    return "true_positives";
  case MetricKind::FalsePositives:
    return "false_positives";
  case MetricKind::TrueNegatives:
    return "true_negatives";
  case MetricKind::FalseNegatives:
    return "false_negatives";
  case MetricKind::Precision:
    return "precision";
  case MetricKind::Recall:
    return "recall";
  case MetricKind::AUC:
    return "auc";
  case MetricKind::PrecisionAtRecall:
    return "precision_at_recall";
  case MetricKind::RecallAtPrecision:
    return "recall_at_precision";
  case MetricKind::SensitivityAtSpecificity:
    return "sensitivity_at_specificity";
  case MetricKind::SpecificityAtSensitivity:
    return "specificity_at_sensitivity";
  case MetricKind::FBetaScore:
    return "fbeta_score";
  case MetricKind::F1Score:
    return "f1_score";
  case MetricKind::IoU:
    return "io_u";
  case MetricKind::MeanIoU:
    return "mean_io_u";
  case MetricKind::BinaryIoU:
    return "binary_io_u";
  case MetricKind::OneHotIoU:
    return "one_hot_io_u";
  case MetricKind::OneHotMeanIoU:
    return "one_hot_mean_io_u";
  case MetricKind::R2Score:
    return "r2_score";
  case MetricKind::RootMeanSquaredError:
    return "root_mean_squared_error";
  }
  return "";
}

std::string MetricConfig::logName() const {
  if (!name.empty())
    return name;
  if (!spelling.empty())
    return spelling;
  return metricDefaultName(kind).str();
}

std::vector<double> MetricConfig::resolvedThresholds() const {
  std::vector<double> t;
  if (kind == MetricKind::AUC) {
    t.push_back(0.0 - kEpsilon);
    if (!thresholds.empty()) {
      std::vector<double> sorted = thresholds;
      std::sort(sorted.begin(), sorted.end());
      t.insert(t.end(), sorted.begin(), sorted.end());
    } else {
      for (int64_t i = 0; i < numThresholds - 2; ++i)
        t.push_back((i + 1) * 1.0 / (numThresholds - 1));
    }
    t.push_back(1.0 + kEpsilon);
    return t;
  }
  if (isAt(kind)) {
    if (numThresholds == 1)
      return {0.5};
    t.push_back(0.0);
    for (int64_t i = 0; i < numThresholds - 2; ++i)
      t.push_back((i + 1) * 1.0 / (numThresholds - 1));
    t.push_back(1.0);
    return t;
  }
  if (!thresholds.empty())
    return thresholds;
  bool negInf =
      topK && (kind == MetricKind::Precision || kind == MetricKind::Recall);
  return {negInf ? kMetricNegInf : 0.5};
}

bool MetricConfig::thresholdsEvenlyDistributed() const {
  if (kind == MetricKind::AUC) {
    if (thresholds.empty())
      return true;
    std::vector<double> t = {0.0};
    std::vector<double> sorted = thresholds;
    std::sort(sorted.begin(), sorted.end());
    t.insert(t.end(), sorted.begin(), sorted.end());
    t.push_back(1.0);
    return evenlyDistributed(t);
  }
  if (isAt(kind))
    return numThresholds != 1;
  return evenlyDistributed(resolvedThresholds());
}

bool MetricConfig::thresholdsWithEpsilon() const {
  if (!thresholdsEvenlyDistributed())
    return false;
  std::vector<double> t = resolvedThresholds();
  return t.front() < 0.0 || t.back() > 1.0;
}

std::vector<int64_t> MetricConfig::resolvedTargetClassIds() const {
  if (kind == MetricKind::MeanIoU || kind == MetricKind::OneHotMeanIoU) {
    std::vector<int64_t> all(numClasses);
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  if (kind == MetricKind::BinaryIoU && targetClassIds.empty())
    return {0, 1};
  return targetClassIds;
}

std::vector<llvm::StringRef> MetricConfig::argumentNames(MetricKind kind) {
  std::vector<llvm::StringRef> a;
  switch (kind) {
  case MetricKind::TopKCategoricalAccuracy:
  case MetricKind::SparseTopKCategoricalAccuracy:
    a = {"k"};
    break;
  case MetricKind::TruePositives:
  case MetricKind::FalsePositives:
  case MetricKind::TrueNegatives:
  case MetricKind::FalseNegatives:
    a = {"thresholds"};
    break;
  case MetricKind::Precision:
  case MetricKind::Recall:
    a = {"thresholds", "top_k", "class_id"};
    break;
  case MetricKind::AUC:
    a = {"num_thresholds", "curve",      "summation_method", "thresholds",
         "multi_label",    "num_labels", "label_weights",    "from_logits"};
    break;
  case MetricKind::PrecisionAtRecall:
  case MetricKind::RecallAtPrecision:
  case MetricKind::SensitivityAtSpecificity:
  case MetricKind::SpecificityAtSensitivity:
    a = {valueArgument(kind), "num_thresholds", "class_id"};
    break;
  case MetricKind::FBetaScore:
    a = {"average", "beta", "threshold"};
    break;
  case MetricKind::F1Score:
    a = {"average", "threshold"};
    break;
  case MetricKind::IoU:
    a = {"num_classes",   "target_class_ids", "ignore_class",
         "sparse_y_true", "sparse_y_pred",    "axis"};
    break;
  case MetricKind::MeanIoU:
    a = {"num_classes", "ignore_class", "sparse_y_true", "sparse_y_pred",
         "axis"};
    break;
  case MetricKind::BinaryIoU:
    a = {"target_class_ids", "threshold"};
    break;
  case MetricKind::OneHotIoU:
    a = {"num_classes", "target_class_ids", "ignore_class", "sparse_y_pred",
         "axis"};
    break;
  case MetricKind::OneHotMeanIoU:
    a = {"num_classes", "ignore_class", "sparse_y_pred", "axis"};
    break;
  case MetricKind::R2Score:
    a = {"class_aggregation", "num_regressors"};
    break;
  default:
    break;
  }
  a.push_back("name");
  a.push_back("dtype");
  return a;
}

llvm::Error MetricConfig::setArgument(llvm::StringRef key,
                                      llvm::StringRef value) {
  std::vector<llvm::StringRef> takes = argumentNames(kind);
  llvm::StringRef cls = metricClassName(kind);
  if (!llvm::is_contained(takes, key)) {
    std::string list;
    for (llvm::StringRef a : takes)
      list += (list.empty() ? "" : ", ") + a.str();
    return makeError("metric " + cls + " takes no argument '" + key +
                     "' (it takes " + list + ")");
  }
  auto bad = [&](llvm::StringRef what) {
    return makeError("metric " + cls + ": " + key + " must be " + what +
                     ", got '" + value + "'");
  };
  value = value.trim();
  if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
      value.back() == value.front())
    value = value.drop_front().drop_back();
  if (key == "name") {
    if (value.empty() || value.find_first_of(":,()=") != llvm::StringRef::npos)
      return bad("a name without ':', ',', '(', ')' or '='");
    name = value.str();
    return llvm::Error::success();
  }
  if (key == "dtype") {
    // The variables' dtype: kcc sums statistics in double and reports
    // float results; "float32" and the IoU family's "int32" change nothing.
    return llvm::Error::success();
  }
  auto setInt = [&](int64_t &field, int64_t min) -> llvm::Error {
    std::optional<int64_t> n = parseInt(value);
    if (!n || *n < min)
      return bad("an integer >= " + std::to_string(min));
    field = *n;
    return llvm::Error::success();
  };
  auto setOptInt = [&](std::optional<int64_t> &field,
                       int64_t min) -> llvm::Error {
    if (isNone(value)) {
      field.reset();
      return llvm::Error::success();
    }
    int64_t n;
    if (llvm::Error e = setInt(n, min))
      return e;
    field = n;
    return llvm::Error::success();
  };
  auto setBool = [&](bool &field) -> llvm::Error {
    std::optional<bool> b = parseBool(value);
    if (!b)
      return bad("true or false");
    field = *b;
    return llvm::Error::success();
  };
  auto setDouble = [&](double &field) -> llvm::Error {
    std::optional<double> d = parseDouble(value);
    if (!d)
      return bad("a number");
    field = *d;
    return llvm::Error::success();
  };
  if (key == "k")
    return setInt(k, 1);
  if (key == "top_k")
    return setOptInt(topK, 1);
  if (key == "class_id")
    return setOptInt(classId, 0);
  if (key == "ignore_class")
    return setOptInt(ignoreClass, INT64_MIN);
  if (key == "num_thresholds")
    return setInt(numThresholds, 1);
  if (key == "num_classes")
    return setInt(numClasses, 1);
  if (key == "num_regressors")
    return setInt(numRegressors, 0);
  if (key == "num_labels") {
    // The label count AUC builds its variables for: kcc reads it from the
    // prediction's shape.
    std::optional<int64_t> unused;
    return setOptInt(unused, 1);
  }
  if (key == "axis") {
    int64_t axis;
    if (llvm::Error e = setInt(axis, INT64_MIN))
      return e;
    if (axis != -1)
      return bad("-1 (the class axis is the last one in kcc)");
    return llvm::Error::success();
  }
  if (key == "multi_label")
    return setBool(multiLabel);
  if (key == "from_logits")
    return setBool(fromLogits);
  if (key == "sparse_y_true")
    return setBool(sparseYTrue);
  if (key == "sparse_y_pred")
    return setBool(sparseYPred);
  if (key == "beta")
    return setDouble(beta);
  if (key == "recall" || key == "precision" || key == "specificity" ||
      key == "sensitivity")
    return setDouble(this->value);
  if (key == "threshold") {
    if (isNone(value)) {
      threshold.reset();
      return llvm::Error::success();
    }
    double t = 0;
    if (llvm::Error e = setDouble(t))
      return e;
    threshold = t;
    return llvm::Error::success();
  }
  if (key == "thresholds") {
    if (isNone(value)) {
      thresholds.clear();
      return llvm::Error::success();
    }
    std::optional<std::vector<double>> list = parseList(value);
    if (!list || list->empty())
      return bad("a number or a list of numbers");
    thresholds = *list;
    return llvm::Error::success();
  }
  if (key == "target_class_ids") {
    std::optional<std::vector<double>> list = parseList(value);
    if (!list || list->empty())
      return bad("a list of class ids");
    targetClassIds.clear();
    for (double d : *list) {
      if (d != std::floor(d) || d < 0)
        return bad("a list of class ids");
      targetClassIds.push_back(static_cast<int64_t>(d));
    }
    return llvm::Error::success();
  }
  if (key == "label_weights") {
    if (isNone(value)) {
      labelWeights.clear();
      return llvm::Error::success();
    }
    std::optional<std::vector<double>> list = parseList(value);
    if (!list || list->empty())
      return bad("a list of non-negative weights");
    for (double w : *list)
      if (!(w >= 0) || !std::isfinite(w))
        return bad("a list of non-negative weights");
    labelWeights = *list;
    return llvm::Error::success();
  }
  if (key == "curve") {
    std::string v = value.upper();
    if (v == "ROC")
      curve = AucCurve::ROC;
    else if (v == "PR")
      curve = AucCurve::PR;
    else if (v == "PRGAIN")
      curve = AucCurve::PRGAIN;
    else
      return bad("ROC, PR or PRGAIN");
    return llvm::Error::success();
  }
  if (key == "summation_method") {
    std::string v = value.lower();
    if (v == "interpolation")
      summation = AucSummation::Interpolation;
    else if (v == "minoring")
      summation = AucSummation::Minoring;
    else if (v == "majoring")
      summation = AucSummation::Majoring;
    else
      return bad("interpolation, minoring or majoring");
    return llvm::Error::success();
  }
  if (key == "average") {
    if (isNone(value)) {
      average.reset();
      return llvm::Error::success();
    }
    if (value != "micro" && value != "macro" && value != "weighted")
      return bad("micro, macro, weighted or None");
    average = value.str();
    return llvm::Error::success();
  }
  if (key == "class_aggregation") {
    if (isNone(value)) {
      classAggregation.reset();
      return llvm::Error::success();
    }
    if (value != "uniform_average" && value != "variance_weighted_average")
      return bad("uniform_average, variance_weighted_average or None");
    classAggregation = value.str();
    return llvm::Error::success();
  }
  return bad("a value kcc understands");
}

std::string MetricConfig::knownNames(bool withAccuracy) {
  std::string list = withAccuracy ? "accuracy, acc, " : "";
  for (const NamedKind &n : kMeanNames) {
    llvm::StringRef name(n.name);
    if (name.front() >= 'a' && name != "mean_absolute_percentage_error" &&
        name != "mean_squared_logarithmic_error")
      list += name.str() + ", ";
  }
  for (MetricKind k : kStateful)
    list += metricClassName(k).str() + ", ";
  return list;
}

llvm::Expected<MetricConfig> MetricConfig::parse(llvm::StringRef text,
                                                 LossKind loss) {
  text = text.trim();
  auto [base, rest] = text.split('(');
  base = base.trim();
  bool hasArgs = text.contains('(');
  std::optional<MetricKind> kind = kindNamed(base, loss);
  if (!kind) {
    std::string list =
        knownNames(accuracyFor(loss).has_value()) +
        "or a class with Keras's arguments, Class(key=value,...)";
    if (base.contains('>'))
      return makeError("custom metric '" + base +
                       "' is Python code, which kcc cannot run; give "
                       "built-in ones with --metrics, or from C++ supply "
                       "it in kcc::CompileOptions::customObjects (for loss " +
                       lossName(loss) + ": " + list + ")");
    return makeError("unknown metric '" + base + "' for loss " +
                     lossName(loss) + " (expected " + list + ")");
  }
  MetricConfig m;
  m.kind = *kind;
  if (m.kind == MetricKind::BinaryIoU)
    m.numClasses = 2;
  if (m.kind == MetricKind::BinaryIoU)
    m.threshold = 0.5;
  if (m.kind == MetricKind::OneHotIoU || m.kind == MetricKind::OneHotMeanIoU) {
    m.sparseYTrue = false;
    m.sparseYPred = false;
  }
  if (!hasArgs) {
    // A bare name logs as written, class names too ("AUC" logs "AUC"), as
    // Keras logs compile()'s strings.
    m.spelling = base.str();
  } else {
    if (!rest.ends_with(")"))
      return makeError("metric '" + text +
                       "' is not NAME or NAME(KEY=VALUE,...): no closing ')'");
    for (llvm::StringRef pair : splitTopLevel(rest.drop_back())) {
      auto [key, value] = pair.split('=');
      if (!pair.contains('='))
        return makeError("metric '" + text + "': '" + pair +
                         "' is not KEY=VALUE");
      if (llvm::Error e = m.setArgument(key.trim(), value.trim()))
        return std::move(e);
    }
  }
  // The target's form: class indices for the sparse loss, the prediction's
  // shape otherwise.
  bool sparseLoss = lossTakesLabels(loss);
  bool checked = isTopK(m.kind) || m.kind >= MetricKind::MeanAbsoluteError;
  bool either = (m.kind == MetricKind::IoU || m.kind == MetricKind::MeanIoU) &&
                m.sparseYTrue;
  if (checked && !either && takesClassIndices(m.kind) != sparseLoss)
    return makeError("metric '" + m.logName() + "' needs " +
                     (takesClassIndices(m.kind)
                          ? "class-index targets"
                          : "targets of the prediction's shape") +
                     ", which loss " + lossName(loss) + " does not take");
  if (llvm::Error e = m.validate())
    return std::move(e);
  return m;
}

std::string MetricConfig::str() const {
  MetricConfig defaults;
  defaults.kind = kind;
  std::vector<std::string> args;
  auto add = [&](llvm::StringRef key, const std::string &v) {
    args.push_back(key.str() + "=" + v);
  };
  switch (kind) {
  case MetricKind::TopKCategoricalAccuracy:
  case MetricKind::SparseTopKCategoricalAccuracy:
    if (k != kTopK)
      add("k", std::to_string(k));
    break;
  case MetricKind::TruePositives:
  case MetricKind::FalsePositives:
  case MetricKind::TrueNegatives:
  case MetricKind::FalseNegatives:
  case MetricKind::Precision:
  case MetricKind::Recall:
  case MetricKind::AUC:
    if (!thresholds.empty())
      add("thresholds", formatList(thresholds));
    if (topK)
      add("top_k", std::to_string(*topK));
    if (classId)
      add("class_id", std::to_string(*classId));
    if (kind == MetricKind::AUC) {
      if (numThresholds != 200 && thresholds.empty())
        add("num_thresholds", std::to_string(numThresholds));
      if (curve != AucCurve::ROC)
        add("curve", curve == AucCurve::PR ? "PR" : "PRGAIN");
      if (summation != AucSummation::Interpolation)
        add("summation_method",
            summation == AucSummation::Minoring ? "minoring" : "majoring");
      if (multiLabel)
        add("multi_label", "true");
      if (!labelWeights.empty())
        add("label_weights", formatList(labelWeights));
      if (fromLogits)
        add("from_logits", "true");
    }
    break;
  case MetricKind::PrecisionAtRecall:
  case MetricKind::RecallAtPrecision:
  case MetricKind::SensitivityAtSpecificity:
  case MetricKind::SpecificityAtSensitivity:
    add(valueArgument(kind), formatExact(value));
    if (numThresholds != 200)
      add("num_thresholds", std::to_string(numThresholds));
    if (classId)
      add("class_id", std::to_string(*classId));
    break;
  case MetricKind::FBetaScore:
  case MetricKind::F1Score:
    if (average)
      add("average", *average);
    if (kind == MetricKind::FBetaScore && beta != 1.0)
      add("beta", formatExact(beta));
    if (threshold)
      add("threshold", formatExact(*threshold));
    break;
  case MetricKind::IoU:
  case MetricKind::MeanIoU:
  case MetricKind::OneHotIoU:
  case MetricKind::OneHotMeanIoU:
  case MetricKind::BinaryIoU: {
    if (kind != MetricKind::BinaryIoU)
      add("num_classes", std::to_string(numClasses));
    if (!targetClassIds.empty() && kind != MetricKind::MeanIoU &&
        kind != MetricKind::OneHotMeanIoU) {
      std::vector<double> ids(targetClassIds.begin(), targetClassIds.end());
      add("target_class_ids", formatList(ids));
    }
    if (ignoreClass)
      add("ignore_class", std::to_string(*ignoreClass));
    bool oneHot =
        kind == MetricKind::OneHotIoU || kind == MetricKind::OneHotMeanIoU;
    if (!oneHot && kind != MetricKind::BinaryIoU && !sparseYTrue)
      add("sparse_y_true", "false");
    if (kind != MetricKind::BinaryIoU && sparseYPred != !oneHot)
      add("sparse_y_pred", sparseYPred ? "true" : "false");
    if (kind == MetricKind::BinaryIoU && threshold && *threshold != 0.5)
      add("threshold", formatExact(*threshold));
    break;
  }
  case MetricKind::R2Score:
    if (classAggregation != defaults.classAggregation)
      add("class_aggregation", classAggregation ? *classAggregation : "None");
    if (numRegressors)
      add("num_regressors", std::to_string(numRegressors));
    break;
  default:
    break;
  }
  if (!name.empty())
    add("name", name);
  if (args.empty()) {
    if (!spelling.empty())
      return spelling;
    return isStateful(kind) ? metricDefaultName(kind).str()
                            : metricDefaultName(kind).str();
  }
  std::string out = metricClassName(kind).str() + "(";
  for (auto [i, a] : llvm::enumerate(args))
    out += (i ? "," : "") + a;
  return out + ")";
}

bool MetricConfig::listResult() const {
  switch (kind) {
  case MetricKind::TruePositives:
  case MetricKind::FalsePositives:
  case MetricKind::TrueNegatives:
  case MetricKind::FalseNegatives:
  case MetricKind::Precision:
  case MetricKind::Recall:
    return resolvedThresholds().size() > 1;
  case MetricKind::FBetaScore:
  case MetricKind::F1Score:
    return !average;
  case MetricKind::R2Score:
    return !classAggregation;
  default:
    return false;
  }
}

llvm::Error MetricConfig::validate() const {
  std::string where = "metric " + metricClassName(kind).str() + ": ";
  if (isAt(kind) && !(value >= 0 && value <= 1))
    return makeError(where + valueArgument(kind).str() +
                     " must be in [0, 1], got " + formatExact(value));
  if (kind == MetricKind::AUC && thresholds.empty() && numThresholds <= 1)
    return makeError(where + "num_thresholds must be > 1, got " +
                     std::to_string(numThresholds));
  if ((kind == MetricKind::FBetaScore || kind == MetricKind::F1Score)) {
    if (!(beta > 0))
      return makeError(where + "beta must be > 0, got " + formatExact(beta));
    if (threshold && !(*threshold > 0 && *threshold <= 1))
      return makeError(where + "threshold must be in (0, 1], got " +
                       formatExact(*threshold));
  }
  if (isIoU(kind)) {
    if (numClasses < 1)
      return makeError(where + "num_classes must be given (>= 1)");
    std::vector<int64_t> ids = resolvedTargetClassIds();
    if (ids.empty())
      return makeError(where + "target_class_ids must be given");
    for (int64_t id : ids)
      if (id >= numClasses)
        return makeError(where + "target class id " + std::to_string(id) +
                         " is out of range [0, " + std::to_string(numClasses) +
                         ")");
  }
  return llvm::Error::success();
}

namespace {
/// A JSON value in the text form's syntax.
std::optional<std::string> jsonText(const llvm::json::Value &v) {
  if (v.kind() == llvm::json::Value::Null)
    return std::string("None");
  if (std::optional<bool> b = v.getAsBoolean())
    return std::string(*b ? "true" : "false");
  if (std::optional<int64_t> i = v.getAsInteger())
    return std::to_string(*i);
  if (std::optional<double> d = v.getAsNumber())
    return formatExact(*d);
  if (std::optional<llvm::StringRef> s = v.getAsString())
    return s->str();
  if (const llvm::json::Array *a = v.getAsArray()) {
    std::string out = "[";
    for (auto [i, item] : llvm::enumerate(*a)) {
      std::optional<std::string> t = jsonText(item);
      if (!t)
        return std::nullopt;
      out += (i ? "," : "") + *t;
    }
    return out + "]";
  }
  return std::nullopt;
}
} // namespace

std::optional<MetricKind> metricKindOfClass(llvm::StringRef className) {
  std::optional<MetricKind> kind =
      kindNamed(className, LossKind::CategoricalCrossentropy);
  if (!kind || className != metricClassName(*kind))
    return std::nullopt;
  return kind;
}

llvm::Expected<std::string> metricFromKeras(llvm::StringRef className,
                                            const llvm::json::Object *config) {
  std::optional<MetricKind> kind = metricKindOfClass(className);
  if (!kind)
    return makeError("metric class '" + className + "' is not supported");
  std::string name;
  if (config)
    if (std::optional<llvm::StringRef> n = config->getString("name"))
      name = n->str();
  std::vector<std::string> args;
  std::vector<llvm::StringRef> takes = MetricConfig::argumentNames(*kind);
  if (config) {
    // In a stable order: Keras's config order is not kept by llvm::json.
    std::vector<std::string> keys;
    for (const auto &[key, value] : *config)
      keys.push_back(key.str());
    std::sort(keys.begin(), keys.end());
    for (const std::string &key : keys) {
      const llvm::json::Value &value = *config->get(key);
      if (key == "name" || key == "dtype")
        continue;
      std::optional<std::string> text = jsonText(value);
      if (!text)
        return makeError("metric " + className + ": argument '" + key +
                         "' has a value kcc cannot read");
      if (!llvm::is_contained(takes, llvm::StringRef(key))) {
        // A mean metric's arguments at their defaults change nothing.
        bool isDefault = ((key == "from_logits" || key == "from_sorted_ids") &&
                          *text == "false") ||
                         (key == "label_smoothing" && value.getAsNumber() &&
                          *value.getAsNumber() == 0) ||
                         (key == "axis" && *text == "-1");
        if (isDefault)
          continue;
        return makeError("metric " + className + ": argument " + key + "=" +
                         *text + " is not supported yet");
      }
      args.push_back(key + "=" + *text);
    }
  }
  bool defaultName = name.empty() || name == metricDefaultName(*kind);
  if (!isStateful(*kind) && args.empty() && defaultName)
    return metricDefaultName(*kind).str();
  if (!defaultName)
    args.push_back("name=" + name);
  std::string out = className.str() + "(";
  for (auto [i, a] : llvm::enumerate(args))
    out += (i ? "," : "") + a;
  out += ")";
  // The canonical form (defaults left out). A metric kcc refuses (an
  // argument out of range, a vector result) stays as Keras wrote it:
  // TrainingConfig::validate() reports it, and the model still imports.
  llvm::Expected<MetricConfig> m = MetricConfig::parse(
      out, takesClassIndices(*kind) ? LossKind::SparseCategoricalCrossentropy
                                    : LossKind::MeanSquaredError);
  if (!m) {
    llvm::consumeError(m.takeError());
    return out;
  }
  return m->str();
}

std::vector<double> metricValues(const MetricConfig &m,
                                 llvm::ArrayRef<double> stats) {
  if (isConfusionMetric(m.kind)) {
    size_t thresholds = m.resolvedThresholds().size();
    size_t per = stats.size() / 4;
    size_t labels = per / thresholds;
    auto tp = stats.slice(0, per), fp = stats.slice(per, per),
         tn = stats.slice(2 * per, per), fn = stats.slice(3 * per, per);
    // The counts, precision and recall: one value per threshold.
    auto perThreshold = [&](auto value) {
      std::vector<double> out(per);
      for (size_t t = 0; t < per; ++t)
        out[t] = value(t);
      return out;
    };
    switch (m.kind) {
    case MetricKind::TruePositives:
      return tp.vec();
    case MetricKind::FalsePositives:
      return fp.vec();
    case MetricKind::TrueNegatives:
      return tn.vec();
    case MetricKind::FalseNegatives:
      return fn.vec();
    case MetricKind::Precision:
      return perThreshold(
          [&](size_t t) { return divideNoNan(tp[t], tp[t] + fp[t]); });
    case MetricKind::Recall:
      return perThreshold(
          [&](size_t t) { return divideNoNan(tp[t], tp[t] + fn[t]); });
    case MetricKind::PrecisionAtRecall:
    case MetricKind::RecallAtPrecision:
    case MetricKind::SensitivityAtSpecificity:
    case MetricKind::SpecificityAtSensitivity: {
      // max(where(constrained >= value, dependent, 0), initial=0), the
      // comparison in float as Keras makes it.
      double best = 0;
      float target = static_cast<float>(m.value);
      for (size_t t = 0; t < per; ++t) {
        float recall =
            static_cast<float>(tp[t]) / static_cast<float>(tp[t] + fn[t]);
        float precision =
            static_cast<float>(tp[t]) / static_cast<float>(tp[t] + fp[t]);
        float specificity =
            static_cast<float>(tn[t]) / static_cast<float>(tn[t] + fp[t]);
        if (tp[t] + fn[t] == 0)
          recall = 0;
        if (tp[t] + fp[t] == 0)
          precision = 0;
        if (tn[t] + fp[t] == 0)
          specificity = 0;
        float constrained, dependent;
        switch (m.kind) {
        case MetricKind::PrecisionAtRecall:
          constrained = recall, dependent = precision;
          break;
        case MetricKind::RecallAtPrecision:
          constrained = precision, dependent = recall;
          break;
        case MetricKind::SensitivityAtSpecificity:
          constrained = specificity, dependent = recall;
          break;
        default:
          constrained = recall, dependent = specificity;
          break;
        }
        if (constrained >= target)
          best = std::max(best, static_cast<double>(dependent));
      }
      return {best};
    }
    case MetricKind::AUC: {
      // Per label (one unless multi_label), then their mean.
      double total = 0;
      for (size_t l = 0; l < labels; ++l) {
        auto at = [&](llvm::ArrayRef<double> v, size_t t) {
          return v[t * labels + l];
        };
        double auc = 0;
        size_t n = thresholds;
        if (m.curve == AucCurve::PR &&
            m.summation == AucSummation::Interpolation) {
          for (size_t i = 0; i + 1 < n; ++i) {
            double tp0 = at(tp, i), tp1 = at(tp, i + 1);
            double p0 = tp0 + at(fp, i), p1 = tp1 + at(fp, i + 1);
            double dtp = tp0 - tp1, dp = p0 - p1;
            double slope = divideNoNan(dtp, std::max(dp, 0.0));
            double intercept = tp1 - slope * p1;
            double ratio =
                p0 > 0 && p1 > 0 ? divideNoNan(p0, std::max(p1, 0.0)) : 1.0;
            auc += divideNoNan(slope * (dtp + intercept * std::log(ratio)),
                               std::max(tp1 + at(fn, i + 1), 0.0));
          }
        } else {
          std::vector<double> x(n), y(n);
          for (size_t t = 0; t < n; ++t) {
            double recall = divideNoNan(at(tp, t), at(tp, t) + at(fn, t));
            if (m.curve == AucCurve::ROC) {
              x[t] = divideNoNan(at(fp, t), at(fp, t) + at(tn, t));
              y[t] = recall;
            } else if (m.curve == AucCurve::PR) {
              x[t] = recall;
              y[t] = divideNoNan(at(tp, t), at(tp, t) + at(fp, t));
            } else {
              // PRGAIN: recall and precision gains, scaled by P / N; no
              // true positives gives gains 0 and 1, a negative recall gain
              // 0 (Keras's fixes).
              double scale =
                  divideNoNan(at(tp, t) + at(fn, t), at(tn, t) + at(fp, t));
              double recallGain =
                  1.0 - scale * divideNoNan(at(fn, t), at(tp, t));
              double precisionGain =
                  1.0 - scale * divideNoNan(at(fp, t), at(tp, t));
              if (at(tp, t) == 0) {
                recallGain = 0;
                precisionGain = 1;
              }
              x[t] = std::max(recallGain, 0.0);
              y[t] = precisionGain;
            }
          }
          for (size_t i = 0; i + 1 < n; ++i) {
            double h = m.summation == AucSummation::Interpolation
                           ? (y[i] + y[i + 1]) / 2
                       : m.summation == AucSummation::Minoring
                           ? std::min(y[i], y[i + 1])
                           : std::max(y[i], y[i + 1]);
            auc += (x[i] - x[i + 1]) * h;
          }
        }
        // The labels' mean, or their average weighed by label_weights.
        total += m.labelWeights.empty() || labels == 1
                     ? auc
                     : auc * m.labelWeights[l];
      }
      if (labels > 1 && !m.labelWeights.empty()) {
        double weights = 0;
        for (double w : m.labelWeights)
          weights += w;
        return {divideNoNan(total, weights)};
      }
      return {labels ? total / labels : 0.0};
    }
    default:
      break;
    }
  }
  switch (m.kind) {
  case MetricKind::FBetaScore:
  case MetricKind::F1Score: {
    // [tp, fp, fn, support] per class.
    size_t c = stats.size() / 4;
    auto tp = stats.slice(0, c), fp = stats.slice(c, c),
         fn = stats.slice(2 * c, c), w = stats.slice(3 * c, c);
    double b2 = m.beta * m.beta;
    auto score = [&](double tp, double fp, double fn) {
      double precision = tp / (tp + fp + kEpsilon);
      double recall = tp / (tp + fn + kEpsilon);
      return precision * recall / (b2 * precision + recall + kEpsilon) *
             (1 + b2);
    };
    if (!m.average) {
      // A score per class.
      std::vector<double> out(c);
      for (size_t i = 0; i < c; ++i)
        out[i] = score(tp[i], fp[i], fn[i]);
      return out;
    }
    if (*m.average == "micro") {
      double sums[3] = {0, 0, 0};
      for (size_t i = 0; i < c; ++i)
        sums[0] += tp[i], sums[1] += fp[i], sums[2] += fn[i];
      return {score(sums[0], sums[1], sums[2])};
    }
    double total = 0, support = 0;
    for (size_t i = 0; i < c; ++i)
      support += w[i];
    for (size_t i = 0; i < c; ++i) {
      double f = score(tp[i], fp[i], fn[i]);
      total +=
          *m.average == "weighted" ? f * w[i] / (support + kEpsilon) : f / c;
    }
    return {total};
  }
  case MetricKind::IoU:
  case MetricKind::MeanIoU:
  case MetricKind::BinaryIoU:
  case MetricKind::OneHotIoU:
  case MetricKind::OneHotMeanIoU: {
    // The confusion matrix, row = true class, column = predicted.
    int64_t c = m.numClasses;
    double sum = 0, valid = 0;
    for (int64_t id : m.resolvedTargetClassIds()) {
      double row = 0, col = 0;
      for (int64_t j = 0; j < c; ++j) {
        row += stats[id * c + j];
        col += stats[j * c + id];
      }
      double tp = stats[id * c + id];
      double denominator = row + col - tp;
      if (denominator > 1e-9) {
        sum += tp / (denominator + kEpsilon);
        valid += 1;
      }
    }
    return {sum / (valid + kEpsilon)};
  }
  case MetricKind::R2Score: {
    // [sum, squared_sum, residual, count] per column, then the values.
    size_t c = (stats.size() - 1) / 4;
    auto sum = stats.slice(0, c), squared = stats.slice(c, c),
         residual = stats.slice(2 * c, c), count = stats.slice(3 * c, c);
    double samples = stats.back();
    std::vector<double> total(c), raw(c);
    for (size_t i = 0; i < c; ++i) {
      double mean = sum[i] / count[i];
      total[i] = squared[i] - sum[i] * mean;
      raw[i] = 1 - residual[i] / total[i];
      if (std::isinf(raw[i]))
        raw[i] = 0;
    }
    // A value per column (class_aggregation=None), or one aggregate.
    std::vector<double> r2 = raw;
    if (m.classAggregation == "uniform_average") {
      r2 = {0.0};
      for (double r : raw)
        r2[0] += r / c;
    } else if (m.classAggregation) {
      double weighted = 0, weights = 0;
      for (size_t i = 0; i < c; ++i)
        weighted += total[i] * raw[i], weights += total[i];
      r2 = {weighted / weights};
    }
    double p = m.numRegressors;
    if (p != 0 && p < samples - 1)
      for (double &r : r2)
        r = 1 - (1 - r) * (samples - 1) / (samples - p - 1);
    return r2;
  }
  case MetricKind::RootMeanSquaredError:
    return {std::sqrt(divideNoNan(stats[0], stats[1]))};
  default:
    return {0.0};
  }
}

double metricResult(const MetricConfig &m, llvm::ArrayRef<double> stats) {
  std::vector<double> values = metricValues(m, stats);
  if (!m.listResult())
    return values.front();
  double sum = 0;
  for (double v : values)
    sum += v;
  return values.empty() ? 0.0 : sum / values.size();
}

} // namespace kcc
