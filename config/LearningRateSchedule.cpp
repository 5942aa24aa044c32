//===- LearningRateSchedule.cpp - Schedules as configuration --------------===//
//
// LearningRateSchedule's one-line text form (how it travels in pass options
// and on the command line), its parser and Keras's constructor checks. The
// IR that computes a schedule's rate is in Schedules.cpp.
//
//===----------------------------------------------------------------------===//

#include "config/TrainingConfig.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kcc {

namespace {

llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// One field of the text form: its Keras name, the kinds that take it and
/// where it lives.
struct ScheduleField {
  const char *name;
  std::initializer_list<ScheduleKind> kinds;
  double LearningRateSchedule::*number = nullptr;
  bool LearningRateSchedule::*flag = nullptr;
  std::vector<double> LearningRateSchedule::*list = nullptr;
  std::optional<double> LearningRateSchedule::*optional = nullptr;
};

using SK = ScheduleKind;
using LRS = LearningRateSchedule;

const ScheduleField kFields[] = {
    {"initial_learning_rate",
     {SK::ExponentialDecay, SK::InverseTimeDecay, SK::PolynomialDecay,
      SK::CosineDecay, SK::CosineDecayRestarts},
     &LRS::initialLearningRate},
    {"decay_steps",
     {SK::ExponentialDecay, SK::InverseTimeDecay, SK::PolynomialDecay,
      SK::CosineDecay},
     &LRS::decaySteps},
    {"first_decay_steps", {SK::CosineDecayRestarts}, &LRS::decaySteps},
    {"decay_rate",
     {SK::ExponentialDecay, SK::InverseTimeDecay},
     &LRS::decayRate},
    {"staircase",
     {SK::ExponentialDecay, SK::InverseTimeDecay},
     nullptr,
     &LRS::staircase},
    {"boundaries",
     {SK::PiecewiseConstantDecay},
     nullptr,
     nullptr,
     &LRS::boundaries},
    {"values", {SK::PiecewiseConstantDecay}, nullptr, nullptr, &LRS::values},
    {"end_learning_rate", {SK::PolynomialDecay}, &LRS::endLearningRate},
    {"power", {SK::PolynomialDecay}, &LRS::power},
    {"cycle", {SK::PolynomialDecay}, nullptr, &LRS::cycle},
    {"alpha", {SK::CosineDecay, SK::CosineDecayRestarts}, &LRS::alpha},
    {"warmup_target",
     {SK::CosineDecay},
     nullptr,
     nullptr,
     nullptr,
     &LRS::warmupTarget},
    {"warmup_steps", {SK::CosineDecay}, &LRS::warmupSteps},
    {"t_mul", {SK::CosineDecayRestarts}, &LRS::tMul},
    {"m_mul", {SK::CosineDecayRestarts}, &LRS::mMul},
};

bool takes(const ScheduleField &f, ScheduleKind kind) {
  return llvm::is_contained(f.kinds, kind);
}

/// The arguments Keras's constructor of `kind` has no default for: the text
/// form must give them, as Python must.
llvm::ArrayRef<const char *> requiredFields(ScheduleKind kind) {
  static const char *exponential[] = {"initial_learning_rate", "decay_steps",
                                      "decay_rate"};
  static const char *piecewise[] = {"boundaries", "values"};
  static const char *decay[] = {"initial_learning_rate", "decay_steps"};
  static const char *restarts[] = {"initial_learning_rate",
                                   "first_decay_steps"};
  switch (kind) {
  case SK::ExponentialDecay:
  case SK::InverseTimeDecay:
    return exponential;
  case SK::PiecewiseConstantDecay:
    return piecewise;
  case SK::PolynomialDecay:
  case SK::CosineDecay:
    return decay;
  case SK::CosineDecayRestarts:
    return restarts;
  }
  return {};
}

/// Shortest text that reads back as the same double.
std::string number(double v) {
  char buf[32];
  for (int digits : {15, 17}) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

llvm::Expected<double> parseNumber(llvm::StringRef field,
                                   llvm::StringRef text) {
  double v;
  if (text.trim().getAsDouble(v))
    return makeError("lr schedule field '" + field +
                     "' expects a number, got '" + text + "'");
  return v;
}

/// Splits "a=1,b=[1,2],c=3" at the commas outside brackets.
llvm::SmallVector<llvm::StringRef> splitTopLevel(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '[')
      ++depth;
    else if (text[i] == ']')
      --depth;
    else if (text[i] == ',' && depth == 0) {
      parts.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (!text.trim().empty())
    parts.push_back(text.drop_front(start).trim());
  return parts;
}

llvm::Error checkPositive(llvm::StringRef kind, llvm::StringRef field,
                          double value) {
  if (std::isfinite(value) && value > 0)
    return llvm::Error::success();
  return makeError(kind + "'s " + field + " must be finite and > 0, got " +
                   number(value));
}

llvm::Error checkFinite(llvm::StringRef kind, llvm::StringRef field,
                        double value) {
  if (std::isfinite(value))
    return llvm::Error::success();
  return makeError(kind + "'s " + field + " must be finite, got " +
                   number(value));
}

} // namespace

double LearningRateSchedule::initialValue() const {
  switch (kind) {
  case ScheduleKind::PiecewiseConstantDecay:
    return values.empty() ? 0.0 : values.front();
  case ScheduleKind::CosineDecay:
    // With warmup the rate climbs from initial_learning_rate.
  default:
    return initialLearningRate;
  }
}

std::string LearningRateSchedule::str() const {
  std::string out = scheduleName(kind).str() + "(";
  bool first = true;
  for (const ScheduleField &f : kFields) {
    if (!takes(f, kind))
      continue;
    std::string value;
    if (f.number)
      value = number(this->*f.number);
    else if (f.flag)
      value = this->*f.flag ? "true" : "false";
    else if (f.list)
      value =
          "[" + llvm::join(llvm::map_range(this->*f.list, number), ",") + "]";
    else if (!(this->*f.optional))
      continue; // unset: the default, None
    else
      value = number(*(this->*f.optional));
    out += (first ? "" : ",") + std::string(f.name) + "=" + value;
    first = false;
  }
  return out + ")";
}

llvm::Expected<LearningRateSchedule>
LearningRateSchedule::parse(llvm::StringRef text) {
  text = text.trim();
  size_t open = text.find('(');
  if (open == llvm::StringRef::npos || !text.ends_with(")"))
    return makeError("lr schedule '" + text +
                     "' must read Kind(key=value,...), e.g. "
                     "ExponentialDecay(initial_learning_rate=0.1,decay_steps="
                     "1000,decay_rate=0.96)");
  LearningRateSchedule s;
  llvm::Expected<ScheduleKind> kind = parseScheduleKind(text.take_front(open));
  if (!kind)
    return kind.takeError();
  s.kind = *kind;
  llvm::StringRef body = text.slice(open + 1, text.size() - 1);
  llvm::SmallVector<llvm::StringRef> given;
  for (llvm::StringRef part : splitTopLevel(body)) {
    auto [key, value] = part.split('=');
    key = key.trim();
    value = value.trim();
    given.push_back(key);
    const ScheduleField *field = llvm::find_if(
        kFields, [&](const ScheduleField &f) { return key == f.name; });
    if (field == std::end(kFields) || !takes(*field, s.kind))
      return makeError(scheduleName(s.kind) + " has no field '" + key + "'");
    if (field->flag) {
      if (value != "true" && value != "false")
        return makeError("lr schedule field '" + key +
                         "' expects true or false, got '" + value + "'");
      s.*field->flag = value == "true";
    } else if (field->list) {
      if (!value.consume_front("[") || !value.consume_back("]"))
        return makeError("lr schedule field '" + key +
                         "' expects a list [a,b,...], got '" + value + "'");
      std::vector<double> &list = s.*field->list;
      list.clear();
      for (llvm::StringRef item : splitTopLevel(value)) {
        llvm::Expected<double> v = parseNumber(key, item);
        if (!v)
          return v.takeError();
        list.push_back(*v);
      }
    } else if (field->optional && value == "none") {
      s.*field->optional = std::nullopt;
    } else {
      llvm::Expected<double> v = parseNumber(key, value);
      if (!v)
        return v.takeError();
      if (field->optional)
        s.*field->optional = *v;
      else
        s.*field->number = *v;
    }
  }
  for (const char *field : requiredFields(s.kind))
    if (!llvm::is_contained(given, field))
      return makeError(scheduleName(s.kind) + " needs " + field +
                       " (Keras's constructor has no default for it)");
  return s;
}

llvm::Error LearningRateSchedule::validate() const {
  llvm::StringRef name = scheduleName(kind);
  if (kind == ScheduleKind::PiecewiseConstantDecay) {
    if (values.size() != boundaries.size() + 1)
      return makeError(name + " needs one more value than boundaries, got " +
                       llvm::Twine(boundaries.size()) + " boundaries and " +
                       llvm::Twine(values.size()) + " values");
    for (double b : boundaries)
      if (llvm::Error e = checkFinite(name, "boundaries", b))
        return e;
    for (double v : values)
      if (llvm::Error e = checkFinite(name, "values", v))
        return e;
    return llvm::Error::success();
  }
  if (llvm::Error e =
          checkFinite(name, "initial_learning_rate", initialLearningRate))
    return e;
  if (llvm::Error e = checkPositive(name,
                                    kind == ScheduleKind::CosineDecayRestarts
                                        ? "first_decay_steps"
                                        : "decay_steps",
                                    decaySteps))
    return e;
  for (auto [field, value] : {std::pair{"decay_rate", decayRate},
                              {"end_learning_rate", endLearningRate},
                              {"power", power},
                              {"alpha", alpha},
                              {"warmup_steps", warmupSteps},
                              {"t_mul", tMul},
                              {"m_mul", mMul}})
    if (llvm::Error e = checkFinite(name, field, value))
      return e;
  if (warmupTarget)
    if (llvm::Error e = checkFinite(name, "warmup_target", *warmupTarget))
      return e;
  if (kind == ScheduleKind::CosineDecay && warmupTarget && warmupSteps < 0)
    return makeError(name + "'s warmup_steps must be >= 0, got " +
                     number(warmupSteps));
  if (kind == ScheduleKind::CosineDecayRestarts && tMul <= 0)
    return makeError(name + "'s t_mul must be > 0, got " + number(tMul));
  return llvm::Error::success();
}

} // namespace kcc
