//===- LossConfig.cpp - A Keras loss and its arguments --------------------===//
//
// Names (keras.losses.ALL_OBJECTS_DICT), the arguments of each loss class
// (its __init__ and get_config), the text form and Keras's checks.
//
//===----------------------------------------------------------------------===//

#include "config/LossConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kcc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

constexpr LossKind kLosses[] = {
    LossKind::SparseCategoricalCrossentropy,
    LossKind::CategoricalCrossentropy,
    LossKind::BinaryCrossentropy,
    LossKind::MeanSquaredError,
    LossKind::MeanAbsoluteError,
    LossKind::MeanAbsolutePercentageError,
    LossKind::MeanSquaredLogarithmicError,
    LossKind::Huber,
    LossKind::LogCosh,
    LossKind::Poisson,
    LossKind::KLDivergence,
    LossKind::CosineSimilarity,
    LossKind::Hinge,
    LossKind::SquaredHinge,
    LossKind::CategoricalHinge,
    LossKind::BinaryFocalCrossentropy,
    LossKind::CategoricalFocalCrossentropy,
    LossKind::Dice,
    LossKind::Tversky,
    LossKind::CTC,
    LossKind::CategoricalGeneralizedCrossEntropy,
    LossKind::Circle,
};

constexpr LossReduction kReductions[] = {
    LossReduction::SumOverBatchSize, LossReduction::Sum, LossReduction::Mean,
    LossReduction::MeanWithSampleWeight, LossReduction::None};

/// The shortest decimal form of `v` that reads back as `v`.
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

} // namespace

llvm::ArrayRef<LossKind> allLosses() { return kLosses; }

llvm::StringRef lossName(LossKind kind) {
  switch (kind) {
  case LossKind::SparseCategoricalCrossentropy:
    return "sparse_categorical_crossentropy";
  case LossKind::CategoricalCrossentropy:
    return "categorical_crossentropy";
  case LossKind::BinaryCrossentropy:
    return "binary_crossentropy";
  case LossKind::MeanSquaredError:
    return "mean_squared_error";
  case LossKind::MeanAbsoluteError:
    return "mean_absolute_error";
  case LossKind::MeanAbsolutePercentageError:
    return "mean_absolute_percentage_error";
  case LossKind::MeanSquaredLogarithmicError:
    return "mean_squared_logarithmic_error";
  case LossKind::Huber:
    return "huber";
  case LossKind::LogCosh:
    return "log_cosh";
  case LossKind::Poisson:
    return "poisson";
  case LossKind::KLDivergence:
    return "kl_divergence";
  case LossKind::CosineSimilarity:
    return "cosine_similarity";
  case LossKind::Hinge:
    return "hinge";
  case LossKind::SquaredHinge:
    return "squared_hinge";
  case LossKind::CategoricalHinge:
    return "categorical_hinge";
  case LossKind::BinaryFocalCrossentropy:
    return "binary_focal_crossentropy";
  case LossKind::CategoricalFocalCrossentropy:
    return "categorical_focal_crossentropy";
  case LossKind::Dice:
    return "dice";
  case LossKind::Tversky:
    return "tversky";
  case LossKind::CTC:
    return "ctc";
  case LossKind::CategoricalGeneralizedCrossEntropy:
    return "categorical_generalized_cross_entropy";
  case LossKind::Circle:
    return "circle";
  }
  llvm_unreachable("unknown loss");
}

llvm::StringRef lossClassName(LossKind kind) {
  switch (kind) {
  case LossKind::SparseCategoricalCrossentropy:
    return "SparseCategoricalCrossentropy";
  case LossKind::CategoricalCrossentropy:
    return "CategoricalCrossentropy";
  case LossKind::BinaryCrossentropy:
    return "BinaryCrossentropy";
  case LossKind::MeanSquaredError:
    return "MeanSquaredError";
  case LossKind::MeanAbsoluteError:
    return "MeanAbsoluteError";
  case LossKind::MeanAbsolutePercentageError:
    return "MeanAbsolutePercentageError";
  case LossKind::MeanSquaredLogarithmicError:
    return "MeanSquaredLogarithmicError";
  case LossKind::Huber:
    return "Huber";
  case LossKind::LogCosh:
    return "LogCosh";
  case LossKind::Poisson:
    return "Poisson";
  case LossKind::KLDivergence:
    return "KLDivergence";
  case LossKind::CosineSimilarity:
    return "CosineSimilarity";
  case LossKind::Hinge:
    return "Hinge";
  case LossKind::SquaredHinge:
    return "SquaredHinge";
  case LossKind::CategoricalHinge:
    return "CategoricalHinge";
  case LossKind::BinaryFocalCrossentropy:
    return "BinaryFocalCrossentropy";
  case LossKind::CategoricalFocalCrossentropy:
    return "CategoricalFocalCrossentropy";
  case LossKind::Dice:
    return "Dice";
  case LossKind::Tversky:
    return "Tversky";
  case LossKind::CTC:
    return "CTC";
  case LossKind::CategoricalGeneralizedCrossEntropy:
    return "CategoricalGeneralizedCrossEntropy";
  case LossKind::Circle:
    return "Circle";
  }
  llvm_unreachable("unknown loss");
}

llvm::StringRef lossDefaultInstanceName(LossKind kind) {
  return kind == LossKind::Huber ? "huber_loss" : lossName(kind);
}

bool lossTakesLabels(LossKind kind) {
  return kind == LossKind::SparseCategoricalCrossentropy ||
         kind == LossKind::CategoricalGeneralizedCrossEntropy ||
         kind == LossKind::Circle;
}

llvm::Expected<LossKind> parseLoss(llvm::StringRef name) {
  for (LossKind k : kLosses)
    if (name == lossName(k) || name == lossClassName(k))
      return k;
  // keras.losses.get's aliases, and Keras 2's names still in
  // keras._legacy.losses.
  std::optional<LossKind> alias =
      llvm::StringSwitch<std::optional<LossKind>>(name)
          .Cases("mse", "MSE", LossKind::MeanSquaredError)
          .Cases("mae", "MAE", LossKind::MeanAbsoluteError)
          .Cases("mape", "MAPE", LossKind::MeanAbsolutePercentageError)
          .Cases("msle", "MSLE", LossKind::MeanSquaredLogarithmicError)
          .Cases("kld", "KLD", "kullback_leibler_divergence",
                 LossKind::KLDivergence)
          .Cases("bce", "BCE", LossKind::BinaryCrossentropy)
          .Case("logcosh", LossKind::LogCosh)
          .Default(std::nullopt);
  if (alias)
    return *alias;
  std::string expected;
  for (LossKind k : kLosses)
    expected += (expected.empty() ? "" : ", ") + lossName(k).str();
  return makeError("unknown loss '" + name + "' (expected " + expected +
                   ", their Keras class names, or mse, mae, mape, msle, "
                   "kld, bce)");
}

llvm::Expected<LossReduction> parseLossReduction(llvm::StringRef name) {
  for (LossReduction r : kReductions)
    if (name == lossReductionName(r))
      return r;
  if (isNone(name))
    return LossReduction::None;
  // tf.keras's default: sum_over_batch_size outside distribution strategies.
  if (name == "auto")
    return LossReduction::SumOverBatchSize;
  return makeError("unknown reduction '" + name +
                   "' (expected sum_over_batch_size, sum, mean, "
                   "mean_with_sample_weight)");
}

llvm::StringRef lossReductionName(LossReduction reduction) {
  switch (reduction) {
  case LossReduction::SumOverBatchSize:
    return "sum_over_batch_size";
  case LossReduction::Sum:
    return "sum";
  case LossReduction::Mean:
    return "mean";
  case LossReduction::MeanWithSampleWeight:
    return "mean_with_sample_weight";
  case LossReduction::None:
    return "none";
  }
  llvm_unreachable("unknown reduction");
}

std::string LossConfig::name() const {
  return custom.empty() ? lossName(kind).str() : custom;
}

double LossConfig::resolvedAlpha() const {
  if (alpha)
    return *alpha;
  return kind == LossKind::Tversky ? 0.5 : 0.25;
}

double LossConfig::resolvedGamma() const {
  if (gamma)
    return *gamma;
  return kind == LossKind::Circle ? 80.0 : 2.0;
}

std::optional<int64_t> LossConfig::resolvedAxis() const {
  if (axis || kind == LossKind::Dice || kind == LossKind::Tversky)
    return axis;
  return -1;
}

llvm::ArrayRef<llvm::StringRef> LossConfig::argumentNames(LossKind kind) {
  static const llvm::StringRef reductionOnly[] = {"reduction"};
  static const llvm::StringRef crossentropy[] = {
      "from_logits", "label_smoothing", "axis", "reduction"};
  static const llvm::StringRef sparse[] = {"from_logits", "ignore_class",
                                           "axis", "reduction"};
  static const llvm::StringRef huber[] = {"delta", "reduction"};
  static const llvm::StringRef axisOnly[] = {"axis", "reduction"};
  static const llvm::StringRef binaryFocal[] = {
      "apply_class_balancing", "alpha", "gamma",    "from_logits",
      "label_smoothing",       "axis",  "reduction"};
  static const llvm::StringRef categoricalFocal[] = {
      "alpha", "gamma", "from_logits", "label_smoothing", "axis", "reduction"};
  static const llvm::StringRef tversky[] = {"alpha", "beta", "axis",
                                            "reduction"};
  static const llvm::StringRef generalized[] = {"q", "reduction"};
  static const llvm::StringRef circle[] = {"gamma", "margin", "remove_diagonal",
                                           "reduction"};
  switch (kind) {
  case LossKind::SparseCategoricalCrossentropy:
    return sparse;
  case LossKind::CategoricalCrossentropy:
  case LossKind::BinaryCrossentropy:
    return crossentropy;
  case LossKind::Huber:
    return huber;
  case LossKind::CosineSimilarity:
  case LossKind::Dice:
    return axisOnly;
  case LossKind::BinaryFocalCrossentropy:
    return binaryFocal;
  case LossKind::CategoricalFocalCrossentropy:
    return categoricalFocal;
  case LossKind::Tversky:
    return tversky;
  case LossKind::CategoricalGeneralizedCrossEntropy:
    return generalized;
  case LossKind::Circle:
    return circle;
  default:
    return reductionOnly;
  }
}

llvm::Error LossConfig::setArgument(llvm::StringRef key,
                                    llvm::StringRef value) {
  if (!llvm::is_contained(argumentNames(kind), key)) {
    std::string takes;
    for (llvm::StringRef a : argumentNames(kind))
      takes += (takes.empty() ? "" : ", ") + a.str();
    return makeError("loss " + lossName(kind) + " takes no argument '" + key +
                     "' (it takes " + takes + ")");
  }
  auto bad = [&](llvm::StringRef what) {
    return makeError("loss " + lossName(kind) + ": " + key + " must be " +
                     what + ", got '" + value + "'");
  };
  if (key == "from_logits" || key == "apply_class_balancing" ||
      key == "remove_diagonal") {
    std::optional<bool> b = parseBool(value);
    if (!b)
      return bad("true or false");
    (key == "from_logits"       ? fromLogits
     : key == "remove_diagonal" ? removeDiagonal
                                : applyClassBalancing) = *b;
    return llvm::Error::success();
  }
  if (key == "reduction") {
    llvm::Expected<LossReduction> r = parseLossReduction(value);
    if (!r)
      return r.takeError();
    reduction = *r;
    return llvm::Error::success();
  }
  if (key == "axis" || key == "ignore_class") {
    std::optional<int64_t> &field = key == "axis" ? axis : ignoreClass;
    int64_t n;
    if (isNone(value))
      field.reset();
    else if (value.getAsInteger(10, n))
      return bad("an integer or None");
    else
      field = n;
    return llvm::Error::success();
  }
  double d;
  if (value.getAsDouble(d))
    return bad("a number");
  if (key == "label_smoothing")
    labelSmoothing = d;
  else if (key == "delta")
    delta = d;
  else if (key == "alpha")
    alpha = d;
  else if (key == "beta")
    beta = d;
  else if (key == "gamma")
    gamma = d;
  else if (key == "q")
    q = d;
  else if (key == "margin")
    margin = d;
  return llvm::Error::success();
}

std::string LossConfig::str() const {
  if (!custom.empty())
    return custom;
  LossConfig defaults;
  defaults.kind = kind;
  llvm::SmallVector<std::string> args;
  for (llvm::StringRef key : argumentNames(kind)) {
    std::string v;
    if (key == "from_logits" && fromLogits)
      v = "true";
    else if (key == "apply_class_balancing" && applyClassBalancing)
      v = "true";
    else if (key == "label_smoothing" && labelSmoothing != 0)
      v = formatExact(labelSmoothing);
    else if (key == "axis" && axis != defaults.resolvedAxis() &&
             resolvedAxis() != defaults.resolvedAxis())
      v = axis ? std::to_string(*axis) : "None";
    else if (key == "ignore_class" && ignoreClass)
      v = std::to_string(*ignoreClass);
    else if (key == "delta" && delta != defaults.delta)
      v = formatExact(delta);
    else if (key == "alpha" && resolvedAlpha() != defaults.resolvedAlpha())
      v = formatExact(resolvedAlpha());
    else if (key == "beta" && beta != defaults.beta)
      v = formatExact(beta);
    else if (key == "gamma" && resolvedGamma() != defaults.resolvedGamma())
      v = formatExact(resolvedGamma());
    else if (key == "q" && q != defaults.q)
      v = formatExact(q);
    else if (key == "margin" && margin != defaults.margin)
      v = formatExact(margin);
    else if (key == "remove_diagonal" && !removeDiagonal)
      v = "false";
    else if (key == "reduction" && reduction != defaults.reduction)
      v = lossReductionName(reduction).str();
    if (!v.empty())
      args.push_back(key.str() + "=" + v);
  }
  std::string out = lossName(kind).str();
  if (args.empty())
    return out;
  out += "(";
  for (size_t i = 0; i < args.size(); ++i)
    out += (i ? "," : "") + args[i];
  return out + ")";
}

llvm::Expected<LossConfig> LossConfig::parse(llvm::StringRef text,
                                             bool allowCustom) {
  text = text.trim();
  auto [name, rest] = text.split('(');
  name = name.trim();
  bool hasArgs = text.contains('(');
  LossConfig loss;
  llvm::Expected<LossKind> kind = parseLoss(name);
  if (!kind) {
    if (allowCustom && !hasArgs && !name.empty()) {
      llvm::consumeError(kind.takeError());
      loss.custom = name.str();
      return loss;
    }
    return kind.takeError();
  }
  loss.kind = *kind;
  if (!hasArgs)
    return loss;
  if (!rest.ends_with(")"))
    return makeError("loss '" + text +
                     "' is not NAME or NAME(KEY=VALUE,...): no closing ')'");
  rest = rest.drop_back().trim();
  if (rest.empty())
    return loss;
  llvm::SmallVector<llvm::StringRef> pairs;
  rest.split(pairs, ',');
  for (llvm::StringRef pair : pairs) {
    auto [key, value] = pair.split('=');
    if (!pair.contains('='))
      return makeError("loss '" + text + "': '" + pair.trim() +
                       "' is not KEY=VALUE");
    if (llvm::Error e = loss.setArgument(key.trim(), value.trim()))
      return std::move(e);
  }
  return loss;
}

llvm::Error LossConfig::validate() const {
  if (!custom.empty())
    return llvm::Error::success();
  std::string where = "loss " + lossName(kind).str() + ": ";
  auto outside = [](double v, double lo, double hi) {
    return !std::isfinite(v) || v < lo || v > hi;
  };
  if (outside(labelSmoothing, 0, 1))
    return makeError(where + "label_smoothing must be in [0, 1], got " +
                     formatExact(labelSmoothing));
  if (!std::isfinite(delta) || delta <= 0)
    return makeError(where + "delta must be finite and > 0, got " +
                     formatExact(delta));
  if (outside(resolvedGamma(), 0, HUGE_VAL))
    return makeError(where + "gamma must be finite and >= 0, got " +
                     formatExact(resolvedGamma()));
  // Keras: "q must be in the interval (0, 1)".
  if (!(q > 0 && q < 1))
    return makeError(where + "q must be in the interval (0, 1), got " +
                     formatExact(q));
  for (auto [field, v] : {std::pair{"alpha", resolvedAlpha()},
                          {"beta", beta},
                          {"margin", margin}})
    if (!std::isfinite(v))
      return makeError(where + field + " must be finite, got " +
                       formatExact(v));
  if (ignoreClass && kind != LossKind::SparseCategoricalCrossentropy)
    return makeError(where + "takes no ignore_class");
  if (reduction == LossReduction::None)
    return makeError(where + "reduction 'none' leaves one loss per example, "
                             "which fit() cannot differentiate (as in Keras); "
                             "use sum_over_batch_size, sum, mean or "
                             "mean_with_sample_weight");
  return llvm::Error::success();
}

} // namespace kcc
