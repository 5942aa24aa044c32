//===- TrainingConfig.cpp - What a training step is built from ------------===//
//
// The name parsers (one per family, one message each, listing what is
// accepted), Keras's default learning rate and the range checks.
//
//===----------------------------------------------------------------------===//

#include "config/TrainingConfig.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <cstdio>

namespace kcc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

constexpr OptimizerKind kOptimizers[] = {
    OptimizerKind::SGD,    OptimizerKind::Adam,    OptimizerKind::RMSprop,
    OptimizerKind::AdamW,  OptimizerKind::Adagrad, OptimizerKind::Nadam,
    OptimizerKind::Adamax, OptimizerKind::Lion};
constexpr ScheduleKind kSchedules[] = {
    ScheduleKind::ExponentialDecay, ScheduleKind::PiecewiseConstantDecay,
    ScheduleKind::InverseTimeDecay, ScheduleKind::PolynomialDecay,
    ScheduleKind::CosineDecay,      ScheduleKind::CosineDecayRestarts};

/// "sgd, adam, ..." or "ExponentialDecay, ...": what a parser accepts.
template <typename Kind, size_t N, typename NameFn>
std::string nameList(const Kind (&kinds)[N], NameFn name) {
  std::string out;
  for (Kind k : kinds)
    out += (out.empty() ? "" : ", ") + name(k).str();
  return out;
}

/// Fails unless `value` is finite and in [lo, hi) (or (lo, hi) when
/// `openLow`).
/// `value` as %g ("5", "0.25", "nan", "-inf").
std::string formatNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

llvm::Error checkRange(llvm::StringRef field, double value, double lo,
                       bool openLow, double hi, llvm::StringRef range) {
  bool ok = std::isfinite(value) && (openLow ? value > lo : value >= lo) &&
            value < hi;
  if (ok)
    return llvm::Error::success();
  char got[32];
  std::snprintf(got, sizeof(got), "%g", value);
  return makeError(field + " must be finite and " + range + ", got " + got);
}

} // namespace

llvm::Expected<OptimizerKind> parseOptimizer(llvm::StringRef name) {
  for (OptimizerKind k : kOptimizers)
    if (name.equals_insensitive(optimizerName(k)))
      return k;
  return makeError("unknown optimizer '" + name + "' (expected " +
                   nameList(kOptimizers, optimizerName) + ")");
}

llvm::StringRef optimizerName(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::SGD:
    return "sgd";
  case OptimizerKind::Adam:
    return "adam";
  case OptimizerKind::RMSprop:
    return "rmsprop";
  case OptimizerKind::AdamW:
    return "adamw";
  case OptimizerKind::Adagrad:
    return "adagrad";
  case OptimizerKind::Nadam:
    return "nadam";
  case OptimizerKind::Adamax:
    return "adamax";
  case OptimizerKind::Lion:
    return "lion";
  }
  llvm_unreachable("unknown optimizer");
}

llvm::Expected<ScheduleKind> parseScheduleKind(llvm::StringRef name) {
  std::string compact = name.str();
  llvm::erase(compact, '_');
  for (ScheduleKind k : kSchedules)
    if (llvm::StringRef(compact).equals_insensitive(scheduleName(k)))
      return k;
  return makeError("unknown learning-rate schedule '" + name + "' (expected " +
                   nameList(kSchedules, scheduleName) + ")");
}

llvm::StringRef scheduleName(ScheduleKind kind) {
  switch (kind) {
  case ScheduleKind::ExponentialDecay:
    return "ExponentialDecay";
  case ScheduleKind::PiecewiseConstantDecay:
    return "PiecewiseConstantDecay";
  case ScheduleKind::InverseTimeDecay:
    return "InverseTimeDecay";
  case ScheduleKind::PolynomialDecay:
    return "PolynomialDecay";
  case ScheduleKind::CosineDecay:
    return "CosineDecay";
  case ScheduleKind::CosineDecayRestarts:
    return "CosineDecayRestarts";
  }
  llvm_unreachable("unknown schedule");
}

llvm::Expected<MetricKind> parseMetric(llvm::StringRef name, LossKind loss) {
  llvm::Expected<MetricConfig> m = MetricConfig::parse(name, loss);
  if (!m)
    return m.takeError();
  return m->kind;
}

llvm::Expected<ExecMode> parseExecMode(llvm::StringRef name) {
  for (ExecMode m : {ExecMode::Compiled, ExecMode::Interpreted})
    if (name == execModeName(m))
      return m;
  return makeError("unknown mode '" + name +
                   "' (expected compiled, interpreted)");
}

const char *execModeName(ExecMode mode) {
  return mode == ExecMode::Compiled ? "compiled" : "interpreted";
}

double OptimizerConfig::resolvedLearningRate() const {
  if (schedule)
    return schedule->initialValue();
  if (learningRate)
    return *learningRate;
  return kind == OptimizerKind::SGD ? 0.01 : 0.001;
}

double OptimizerConfig::resolvedBeta2() const {
  if (beta2)
    return *beta2;
  return kind == OptimizerKind::Lion ? 0.99 : 0.999;
}

double OptimizerConfig::resolvedWeightDecay() const {
  if (weightDecay)
    return *weightDecay;
  return kind == OptimizerKind::AdamW ? 0.004 : 0.0;
}

std::string OutputTraining::str() const {
  // Every digit: the weight must survive the option round trip exactly.
  char weight[32];
  std::snprintf(weight, sizeof(weight), "%.17g", lossWeight);
  LossConfig args = loss;
  args.fromLogits = false; // FROM_LOGITS says it
  std::string out = name + ":" + args.str() + ":" + weight + ":" +
                    (loss.fromLogits ? "1" : "0");
  for (const std::string &m : metrics)
    out += ":" + m;
  return out;
}

llvm::Expected<OutputTraining> OutputTraining::parse(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> fields;
  text.split(fields, ':');
  if (fields.size() < 4 || fields[0].empty())
    return makeError("output '" + text +
                     "' is not NAME:LOSS:WEIGHT:FROM_LOGITS[:METRIC...]");
  OutputTraining out;
  out.name = fields[0].str();
  // Not a built-in loss: a custom object's name, which validate() checks.
  llvm::Expected<LossConfig> loss =
      LossConfig::parse(fields[1], /*allowCustom=*/true);
  if (!loss)
    return makeError("output '" + fields[0] +
                     "': " + llvm::toString(loss.takeError()));
  out.loss = *loss;
  if (fields[2].getAsDouble(out.lossWeight))
    return makeError("output '" + fields[0] + "': loss weight '" + fields[2] +
                     "' is not a number");
  if (fields[3] != "0" && fields[3] != "1")
    return makeError("output '" + fields[0] + "': from_logits must be 0 or 1");
  out.loss.fromLogits = fields[3] == "1";
  for (llvm::StringRef m : llvm::ArrayRef(fields).drop_front(4))
    out.metrics.push_back(m.str());
  return out;
}

llvm::StringRef metricLogName(llvm::StringRef name) {
  if (name.contains('(')) {
    // `Class(...,name=NAME,...)`: NAME, else the class's default name.
    size_t at = name.find("name=");
    while (at != llvm::StringRef::npos && at > 0 && name[at - 1] != '(' &&
           name[at - 1] != ',')
      at = name.find("name=", at + 1);
    if (at != llvm::StringRef::npos)
      return name.substr(at + 5).take_until(
          [](char c) { return c == ',' || c == ')'; });
  }
  // A class with arguments logs as the class's default instance name; a
  // bare name (a class name too) as written, as Keras logs compile()'s
  // strings.
  if (name.contains('('))
    if (std::optional<MetricKind> kind =
            metricKindOfClass(name.split('(').first.trim()))
      return metricDefaultName(*kind);
  return name.rsplit('>').second.empty() ? name : name.rsplit('>').second;
}

bool TrainingConfig::isCustomObject(llvm::StringRef name) const {
  return llvm::is_contained(customObjects, name);
}

std::vector<std::string> TrainingConfig::resultNames() const {
  std::vector<std::string> names;
  if (outputs.empty()) {
    for (const std::string &m : metrics)
      names.push_back(metricLogName(m).str());
    return names;
  }
  for (const OutputTraining &o : outputs)
    names.push_back(o.name + "_loss");
  for (const OutputTraining &o : outputs)
    for (const std::string &m : o.metrics)
      names.push_back(o.name + "_" + metricLogName(m).str());
  return names;
}

namespace {
/// A custom loss must be one the caller supplied; the message says how to
/// supply it.
llvm::Error checkCustomLoss(const TrainingConfig &config,
                            const LossConfig &loss) {
  if (loss.custom.empty() || config.isCustomObject(loss.custom))
    return llvm::Error::success();
  std::string builtins;
  for (LossKind k : allLosses())
    builtins += (builtins.empty() ? "" : ", ") + lossName(k).str();
  llvm::StringRef name = loss.custom;
  std::string supply = "from C++ supply it in "
                       "kcc::CompileOptions::customObjects[\"" +
                       name.str() + "\"]";
  if (name.contains('>'))
    return makeError("custom loss '" + name +
                     "' is Python code, which kcc cannot run; give a "
                     "built-in loss with --loss (" +
                     builtins + "), or " + supply);
  return makeError("unknown loss '" + name + "' (expected " + builtins +
                   "; or, for a loss written in C++, " + supply + ")");
}

/// A metric of an output trained with `loss`: a custom object, or a
/// built-in one resolved against the loss.
llvm::Error checkMetric(const TrainingConfig &config, llvm::StringRef name,
                        const LossConfig &loss) {
  if (config.isCustomObject(name))
    return llvm::Error::success();
  // With a custom loss the step resolves built-in metrics against the form
  // of its target (LossConfig::custom); either form may be the one.
  if (!loss.custom.empty()) {
    llvm::Expected<MetricKind> sparse =
        parseMetric(name, LossKind::SparseCategoricalCrossentropy);
    if (sparse)
      return llvm::Error::success();
    llvm::consumeError(sparse.takeError());
  }
  llvm::Expected<MetricKind> m = parseMetric(
      name,
      loss.custom.empty() ? loss.kind : LossKind::CategoricalCrossentropy);
  return m ? llvm::Error::success() : m.takeError();
}
} // namespace

llvm::Error TrainingConfig::validate() const {
  for (const std::string &name : customObjects)
    if (name.empty() ||
        llvm::StringRef(name).find_first_of(":,") != llvm::StringRef::npos)
      return makeError("custom object '" + name +
                       "': its name must be non-empty and contain no ':' "
                       "or ','");
  if (llvm::Error e = checkCustomLoss(*this, loss))
    return e;
  if (llvm::Error e = loss.validate())
    return e;
  for (const std::string &name : metrics)
    if (llvm::Error e = checkMetric(*this, name, loss))
      return e;
  if (outputs.size() == 1)
    return makeError("outputs: one output trains with `loss` and `metrics`; "
                     "per-output entries are for models with several");
  for (const OutputTraining &o : outputs) {
    if (o.name.empty() || llvm::StringRef(o.name).contains(':'))
      return makeError("outputs: output name '" + o.name +
                       "' must be non-empty and contain no ':'");
    if (llvm::count_if(outputs, [&](const OutputTraining &other) {
          return other.name == o.name;
        }) > 1)
      return makeError("outputs: output '" + o.name + "' is given twice");
    if (!std::isfinite(o.lossWeight))
      return makeError("loss_weights: the weight of output '" + o.name +
                       "' must be finite, got " + formatNumber(o.lossWeight));
    if (llvm::Error e = checkCustomLoss(*this, o.loss))
      return makeError("output '" + o.name +
                       "': " + llvm::toString(std::move(e)));
    if (llvm::Error e = o.loss.validate())
      return makeError("output '" + o.name +
                       "': " + llvm::toString(std::move(e)));
    for (const std::string &name : o.metrics)
      if (llvm::Error e = checkMetric(*this, name, o.loss))
        return makeError("output '" + o.name +
                         "': " + llvm::toString(std::move(e)));
  }
  if (!outputs.empty() && !classWeight.empty())
    return makeError("class_weight is not supported for a model with several "
                     "outputs (as in Keras); give sample weights instead");
  if (batch < 1)
    return makeError("batch must be positive, got " + llvm::Twine(batch));
  for (auto [cls, weight] : classWeight) {
    if (cls < 0)
      return makeError("class_weight: class " + llvm::Twine(cls) +
                       " is negative");
    if (!std::isfinite(weight) || weight < 0)
      return makeError("class_weight: the weight of class " + llvm::Twine(cls) +
                       " must be finite and >= 0, got " + formatNumber(weight));
  }
  const OptimizerConfig &o = optimizer;
  double inf = HUGE_VAL;
  // Each parameter is checked whether or not the optimizer uses it: a bad
  // value is a mistake even where it is ignored.
  if (llvm::Error e = checkRange("learning_rate", o.resolvedLearningRate(), 0,
                                 /*openLow=*/true, inf, "> 0"))
    return e;
  if (llvm::Error e =
          checkRange("momentum", o.momentum, 0, false, 1, "in [0, 1)"))
    return e;
  if (llvm::Error e = checkRange("beta1", o.beta1, 0, false, 1, "in [0, 1)"))
    return e;
  if (o.kind == OptimizerKind::Lion && o.beta1 == 0)
    return makeError("beta1 of lion must be in (0, 1) (0 degenerates to "
                     "SignSGD), got 0");
  if (llvm::Error e =
          checkRange("beta2", o.resolvedBeta2(), 0, false, 1, "in [0, 1)"))
    return e;
  if (llvm::Error e = checkRange("epsilon", o.epsilon, 0, true, inf, "> 0"))
    return e;
  if (llvm::Error e = checkRange("rho", o.rho, 0, false, 1, "in [0, 1)"))
    return e;
  if (llvm::Error e =
          checkRange("initial_accumulator_value", o.initialAccumulatorValue, 0,
                     false, inf, ">= 0"))
    return e;
  if (llvm::Error e = checkRange("weight_decay", o.resolvedWeightDecay(), 0,
                                 false, inf, ">= 0"))
    return e;
  int clips = 0;
  for (auto [field, value] : {std::pair{"clipnorm", o.clipnorm},
                              {"clipvalue", o.clipvalue},
                              {"global_clipnorm", o.globalClipnorm}}) {
    if (llvm::Error e = checkRange(field, value, 0, false, inf, ">= 0"))
      return e;
    clips += value > 0;
  }
  if (clips > 1)
    return makeError("only one of clipnorm, clipvalue and global_clipnorm "
                     "can be set");
  if (o.schedule)
    return o.schedule->validate();
  return llvm::Error::success();
}

llvm::Expected<std::map<int64_t, double>>
parseClassWeight(llvm::StringRef text) {
  std::map<int64_t, double> weights;
  auto add = [&](llvm::StringRef key,
                 std::optional<double> value) -> llvm::Error {
    key = key.trim();
    int64_t cls;
    if (key.getAsInteger(10, cls) || cls < 0)
      return makeError("class '" + key +
                       "' is not a class index (an integer >= 0)");
    if (!value)
      return makeError("the weight of class " + llvm::Twine(cls) +
                       " is not a number");
    if (!std::isfinite(*value) || *value < 0)
      return makeError("the weight of class " + llvm::Twine(cls) +
                       " must be finite and >= 0, got " + formatNumber(*value));
    if (!weights.emplace(cls, *value).second)
      return makeError("class " + llvm::Twine(cls) + " is given twice");
    return llvm::Error::success();
  };
  llvm::StringRef trimmed = text.trim();
  if (trimmed.empty())
    return makeError("no class weights given");
  if (trimmed.starts_with("{")) {
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(trimmed);
    if (!json)
      return makeError("not valid JSON: " + llvm::toString(json.takeError()));
    const llvm::json::Object *object = json->getAsObject();
    if (!object)
      return makeError("expected a JSON object of class -> weight");
    for (const auto &[key, value] : *object)
      if (llvm::Error e = add(key.str(), value.getAsNumber()))
        return std::move(e);
    return weights;
  }
  llvm::SmallVector<llvm::StringRef> entries;
  trimmed.split(entries, ',');
  for (llvm::StringRef entry : entries) {
    auto [key, value] = entry.split(':');
    if (value.empty() && !entry.contains(':'))
      return makeError("'" + entry.trim() +
                       "' is not CLASS:WEIGHT (e.g. 0:1,1:5)");
    double w;
    std::optional<double> parsed;
    if (!value.trim().getAsDouble(w))
      parsed = w;
    if (llvm::Error e = add(key, parsed))
      return std::move(e);
  }
  return weights;
}

} // namespace kcc
