//===- CallbackFlags.cpp - kcc train's callback flags, parsed -------------===//

#include "CallbackFlags.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cmath>
#include <functional>
#include <map>

using namespace kcc;
using namespace kcc::driver;

namespace {

llvm::Error flagError(const std::string &flag, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--" + flag + ": " + message);
}

/// A setter per key; parses `value` ("k=v,k=v") through them.
using Setters = std::map<std::string, std::function<bool(llvm::StringRef)>>;

llvm::Error applyPairs(const std::string &flag, const std::string &value,
                       const Setters &setters) {
  llvm::SmallVector<llvm::StringRef> pairs;
  llvm::StringRef(value).split(pairs, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef pair : pairs) {
    auto [key, v] = pair.split('=');
    key = key.trim();
    v = v.trim();
    auto it = setters.find(key.str());
    if (it == setters.end()) {
      std::string known;
      for (const auto &[k, s] : setters)
        known += (known.empty() ? "" : ", ") + k;
      return flagError(flag,
                       "unknown key '" + key + "' (expected " + known + ")");
    }
    if (!pair.contains('=') || v.empty())
      return flagError(flag, "'" + key + "' needs a value (" + key + "=...)");
    if (!it->second(v))
      return flagError(flag, "invalid value '" + v + "' for '" + key + "'");
  }
  return llvm::Error::success();
}

std::function<bool(llvm::StringRef)> real(double &out, bool nonNegative) {
  return [&out, nonNegative](llvm::StringRef v) {
    double d;
    if (v.getAsDouble(d) || !std::isfinite(d) || (nonNegative && d < 0))
      return false;
    out = d;
    return true;
  };
}

std::function<bool(llvm::StringRef)> optionalReal(std::optional<double> &out) {
  return [&out](llvm::StringRef v) {
    double d;
    if (v.getAsDouble(d) || !std::isfinite(d))
      return false;
    out = d;
    return true;
  };
}

std::function<bool(llvm::StringRef)> count(int64_t &out) {
  return [&out](llvm::StringRef v) {
    long long n;
    if (v.getAsInteger(10, n) || n < 0)
      return false;
    out = n;
    return true;
  };
}

std::function<bool(llvm::StringRef)> level(int &out) {
  return [&out](llvm::StringRef v) {
    int n;
    if (v.getAsInteger(10, n) || n < 0 || n > 2)
      return false;
    out = n;
    return true;
  };
}

std::function<bool(llvm::StringRef)> boolean(bool &out) {
  return [&out](llvm::StringRef v) {
    std::string s = v.lower();
    if (s == "true" || s == "1")
      out = true;
    else if (s == "false" || s == "0")
      out = false;
    else
      return false;
    return true;
  };
}

std::function<bool(llvm::StringRef)> text(std::string &out) {
  return [&out](llvm::StringRef v) {
    out = v.str();
    return true;
  };
}

std::function<bool(llvm::StringRef)> mode(MonitorMode &out) {
  return [&out](llvm::StringRef v) {
    if (v == "auto")
      out = MonitorMode::Auto;
    else if (v == "min")
      out = MonitorMode::Min;
    else if (v == "max")
      out = MonitorMode::Max;
    else
      return false;
    return true;
  };
}

} // namespace

llvm::Expected<EarlyStopping::Options>
driver::parseEarlyStopping(const std::string &value) {
  EarlyStopping::Options o;
  Setters s = {{"monitor", text(o.monitor)},
               {"min_delta", real(o.minDelta, false)},
               {"patience", count(o.patience)},
               {"verbose", level(o.verbose)},
               {"mode", mode(o.mode)},
               {"baseline", optionalReal(o.baseline)},
               {"restore_best_weights", boolean(o.restoreBestWeights)},
               {"start_from_epoch", count(o.startFromEpoch)}};
  if (llvm::Error e = applyPairs("early-stopping", value, s))
    return std::move(e);
  return o;
}

llvm::Expected<ReduceLROnPlateau::Options>
driver::parseReduceLROnPlateau(const std::string &value) {
  ReduceLROnPlateau::Options o;
  Setters s = {
      {"monitor", text(o.monitor)},    {"factor", real(o.factor, true)},
      {"patience", count(o.patience)}, {"verbose", level(o.verbose)},
      {"mode", mode(o.mode)},          {"min_delta", real(o.minDelta, true)},
      {"cooldown", count(o.cooldown)}, {"min_lr", real(o.minLr, true)}};
  if (llvm::Error e = applyPairs("reduce-lr-on-plateau", value, s))
    return std::move(e);
  if (!(o.factor < 1.0))
    return flagError("reduce-lr-on-plateau", "factor must be below 1.0, got " +
                                                 pythonFloatRepr(o.factor));
  return o;
}

llvm::Expected<ModelCheckpoint::Options>
driver::parseModelCheckpoint(const std::string &value) {
  ModelCheckpoint::Options o;
  Setters s = {
      {"filepath", text(o.filepath)},
      {"monitor", text(o.monitor)},
      {"verbose", level(o.verbose)},
      {"save_best_only", boolean(o.saveBestOnly)},
      {"save_weights_only", boolean(o.saveWeightsOnly)},
      {"mode", mode(o.mode)},
      {"initial_value_threshold", optionalReal(o.initialValueThreshold)}};
  if (llvm::Error e = applyPairs("checkpoint", value, s))
    return std::move(e);
  if (o.filepath.empty())
    return flagError("checkpoint", "needs filepath=PATTERN (e.g. "
                                   "filepath=ckpt-{epoch:02d}.keras)");
  llvm::StringRef path(o.filepath);
  if (o.saveWeightsOnly && !path.ends_with(".weights.h5"))
    return flagError("checkpoint", "with save_weights_only=true the filepath "
                                   "must end in .weights.h5, got '" +
                                       o.filepath + "'");
  if (!o.saveWeightsOnly && !path.ends_with(".keras"))
    return flagError("checkpoint", "the filepath must end in .keras (or "
                                   ".weights.h5 with save_weights_only=true), "
                                   "got '" +
                                       o.filepath + "'");
  return o;
}
