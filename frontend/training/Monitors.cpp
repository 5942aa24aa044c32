//===- Monitors.cpp - EarlyStopping, ReduceLROnPlateau, ModelCheckpoint ---===//
//
// The callbacks that watch one logged value, each with Keras 3's own rules
// (keras/src/callbacks/{early_stopping,reduce_lr_on_plateau,
// model_checkpoint}.py), including their differing "auto" modes: Keras's
// EarlyStopping asks the metric for its direction, ReduceLROnPlateau and
// ModelCheckpoint maximize what has "acc" in its name.
//
//===----------------------------------------------------------------------===//

#include "frontend/training/Callbacks.h"
#include "frontend/training/Trainer.h"
#include "runtime/Error.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <limits>

using namespace kcc;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string availableKeys(const Logs &logs) {
  std::string keys;
  for (const auto &[k, v] : logs)
    keys += (keys.empty() ? "" : ",") + k;
  return keys;
}

/// The monitored value at the end of `epoch`. A list (a metric with several
/// thresholds or classes) has no order: Keras fails comparing its array
/// ("truth value of an array ... is ambiguous"); kcc says which callback,
/// monitor and epoch.
double monitored(const LogValue &value, const std::string &monitor,
                 const char *callback, int64_t epoch) {
  if (value.isList())
    throw Error(std::string(callback) + ": monitor '" + monitor + "' is a " +
                "list of " + std::to_string(value.values().size()) +
                " values at the end of epoch " + std::to_string(epoch + 1) +
                " (a metric with several thresholds or classes), which has "
                "no single best; monitor a metric with one value");
  return value.number();
}

/// "%.5f", as Keras's messages print values.
std::string five(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.5f", v);
  return buf;
}
} // namespace

bool kcc::monitorIncreases(const std::string &monitor, MonitorMode mode,
                           const char *callback) {
  if (mode != MonitorMode::Auto)
    return mode == MonitorMode::Max;
  llvm::StringRef name(monitor);
  if (llvm::StringRef(callback) != "EarlyStopping")
    return name.contains("acc") || name.starts_with("fmeasure");
  // EarlyStopping: the metric's own direction.
  name.consume_front("val_");
  std::optional<bool> up =
      llvm::StringSwitch<std::optional<bool>>(name)
          .Cases("accuracy", "acc", "sparse_categorical_accuracy",
                 "categorical_accuracy", "binary_accuracy", true)
          .Cases("top_k_categorical_accuracy",
                 "sparse_top_k_categorical_accuracy", "auc", "precision",
                 "recall", true)
          .Cases("loss", "mse", "mae", "mean_squared_error",
                 "mean_absolute_error", false)
          .Default(std::nullopt);
  if (!up)
    throw Error("EarlyStopping: monitor '" + monitor +
                "': cannot tell whether it should be maximized or minimized; "
                "give mode=max or mode=min");
  return *up;
}

// ---- EarlyStopping ---------------------------------------------------------

EarlyStopping::EarlyStopping(Options options)
    : o_(std::move(options)),
      increases_(monitorIncreases(o_.monitor, o_.mode, "EarlyStopping")) {
  if (o_.patience < 0)
    throw Error("EarlyStopping: patience must be 0 or more, got " +
                std::to_string(o_.patience));
  // Keras: min_delta = abs(min_delta), negated when minimizing.
  o_.minDelta = std::fabs(o_.minDelta) * (increases_ ? 1 : -1);
}

bool EarlyStopping::improves(double value, double reference) const {
  return increases_ ? value - o_.minDelta > reference
                    : value - o_.minDelta < reference;
}

void EarlyStopping::onTrainBegin(Logs &) {
  wait = 0;
  stoppedEpoch = 0;
  best = increases_ ? -kInf : kInf;
  bestWeights_.reset();
  bestEpoch = 0;
}

void EarlyStopping::onEpochEnd(int64_t epoch, Logs &logs) {
  auto it = logs.find(o_.monitor);
  if (it == logs.end()) {
    llvm::WithColor::warning(llvm::errs(), "kcc")
        << "Early stopping conditioned on metric `" << o_.monitor
        << "` which is not available. Available metrics are: "
        << availableKeys(logs) << "\n";
    return;
  }
  if (epoch < o_.startFromEpoch)
    return;
  double current = monitored(it->second, o_.monitor, "EarlyStopping", epoch);
  if (o_.restoreBestWeights && !bestWeights_) {
    // Never set: the current weights are the best so far.
    bestWeights_ = trainer().getWeights();
    bestEpoch = epoch;
  }
  ++wait;
  if (improves(current, best)) {
    best = current;
    bestEpoch = epoch;
    if (o_.restoreBestWeights)
      bestWeights_ = trainer().getWeights();
    // Only restart the wait on beating both the baseline and the best.
    if (!o_.baseline || improves(current, *o_.baseline))
      wait = 0;
    return;
  }
  if (wait >= o_.patience && epoch > 0) {
    stoppedEpoch = epoch;
    trainer().stopTraining = true;
  }
}

void EarlyStopping::onTrainEnd(Logs &) {
  if (stoppedEpoch > 0 && o_.verbose > 0)
    llvm::outs() << "Epoch " << stoppedEpoch + 1 << ": early stopping\n";
  if (o_.restoreBestWeights && bestWeights_) {
    if (o_.verbose > 0)
      llvm::outs() << "Restoring model weights from the end of the best "
                      "epoch: "
                   << bestEpoch + 1 << ".\n";
    trainer().setWeights(*bestWeights_);
  }
}

// ---- ReduceLROnPlateau -----------------------------------------------------

ReduceLROnPlateau::ReduceLROnPlateau(Options options)
    : o_(std::move(options)),
      increases_(monitorIncreases(o_.monitor, o_.mode, "ReduceLROnPlateau")) {
  if (!(o_.factor < 1.0))
    throw Error("ReduceLROnPlateau does not support a factor >= 1.0. Got " +
                pythonFloatRepr(o_.factor));
  if (o_.patience < 0 || o_.cooldown < 0)
    throw Error("ReduceLROnPlateau: patience and cooldown must be 0 or more");
}

void ReduceLROnPlateau::onTrainBegin(Logs &) {
  best = increases_ ? -kInf : kInf;
  cooldownCounter = 0;
  wait = 0;
}

void ReduceLROnPlateau::onEpochEnd(int64_t epoch, Logs &logs) {
  logs["learning_rate"] = trainer().learningRate();
  auto it = logs.find(o_.monitor);
  if (it == logs.end()) {
    llvm::WithColor::warning(llvm::errs(), "kcc")
        << "Learning rate reduction is conditioned on metric `" << o_.monitor
        << "` which is not available. Available metrics are: "
        << availableKeys(logs) << "\n";
    return;
  }
  double current =
      monitored(it->second, o_.monitor, "ReduceLROnPlateau", epoch);
  if (cooldownCounter > 0) {
    --cooldownCounter;
    wait = 0;
  }
  bool better =
      increases_ ? current > best + o_.minDelta : current < best - o_.minDelta;
  if (better) {
    best = current;
    wait = 0;
  } else if (cooldownCounter <= 0) {
    ++wait;
    if (wait >= o_.patience) {
      double oldLr = trainer().learningRate();
      // Keras compares against float32(min_lr).
      if (oldLr > static_cast<double>(static_cast<float>(o_.minLr))) {
        double newLr = std::max(oldLr * o_.factor, o_.minLr);
        trainer().setLearningRate(newLr);
        if (o_.verbose > 0)
          llvm::outs() << "\nEpoch " << epoch + 1
                       << ": ReduceLROnPlateau reducing learning rate to "
                       << pythonFloatRepr(newLr) << ".\n";
        cooldownCounter = o_.cooldown;
        wait = 0;
      }
    }
  }
}

// ---- ModelCheckpoint -------------------------------------------------------

ModelCheckpoint::ModelCheckpoint(Options options, SaveFn save)
    : o_(std::move(options)), save_(std::move(save)),
      increases_(monitorIncreases(o_.monitor, o_.mode, "ModelCheckpoint")) {
  llvm::StringRef path(o_.filepath);
  if (o_.saveWeightsOnly && !path.ends_with(".weights.h5"))
    throw Error("When using `save_weights_only=True` in `ModelCheckpoint`, "
                "the filepath provided must end in `.weights.h5` (Keras "
                "weights format). Received: filepath=" +
                o_.filepath);
  if (!o_.saveWeightsOnly && !path.ends_with(".keras"))
    throw Error("The filepath provided must end in `.keras` (Keras model "
                "format). Received: filepath=" +
                o_.filepath);
  if (!save_)
    throw Error("ModelCheckpoint: no save function");
  best = o_.initialValueThreshold ? *o_.initialValueThreshold
                                  : (increases_ ? -kInf : kInf);
}

void ModelCheckpoint::onEpochEnd(int64_t epoch, Logs &logs) {
  // The numbers only: a list in the file name is not supported.
  std::map<std::string, double> values;
  for (const auto &[key, value] : logs)
    if (!value.isList())
      values[key] = value.number();
  values["epoch"] = static_cast<double>(epoch + 1);
  std::string path = formatPythonPattern(o_.filepath, values, {"epoch"});
  if (o_.saveBestOnly) {
    auto it = logs.find(o_.monitor);
    if (it == logs.end()) {
      llvm::WithColor::warning(llvm::errs(), "kcc")
          << "Can save best model only with " << o_.monitor
          << " available, skipping.\n";
      return;
    }
    double current =
        monitored(it->second, o_.monitor, "ModelCheckpoint", epoch);
    bool better = increases_ ? current > best : current < best;
    if (!better) {
      if (o_.verbose > 0)
        llvm::outs() << "\nEpoch " << epoch + 1 << ": " << o_.monitor
                     << " did not improve from " << five(best) << "\n";
      return;
    }
    if (o_.verbose > 0)
      llvm::outs() << "\nEpoch " << epoch + 1 << ": " << o_.monitor
                   << " improved from " << five(best) << " to " << five(current)
                   << ", saving model to " << path << "\n";
    best = current;
  } else if (o_.verbose > 0) {
    llvm::outs() << "\nEpoch " << epoch + 1 << ": saving model to " << path
                 << "\n";
  }
  save_(path, o_.saveWeightsOnly);
  saved.push_back(path);
}
