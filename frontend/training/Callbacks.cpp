//===- Callbacks.cpp - History, the progress bar, TerminateOnNaN, CSV -----===//

#include "frontend/training/Callbacks.h"
#include "frontend/training/Trainer.h"
#include "runtime/Collectives.h"
#include "runtime/Error.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>

using namespace kcc;

Callback::~Callback() = default;

Trainer &Callback::trainer() const {
  if (!trainer_)
    throw Error("callback: no trainer (it is set when fit() starts)");
  return *trainer_;
}

// ---- History ---------------------------------------------------------------

void History::onTrainBegin(Logs &) {
  epoch.clear();
  history.clear();
  epochs.clear();
}

void History::onEpochEnd(int64_t e, Logs &logs) {
  epoch.push_back(e);
  for (const auto &[key, value] : logs)
    history[key].push_back(value);
}

// ---- ProgbarLogger ---------------------------------------------------------

std::string kcc::formatLogValue(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.4f", value);
  return buf;
}

namespace {
using Clock = std::chrono::steady_clock;

/// The logs as the bar lists them: loss first, the other training values
/// sorted, then val_loss and the other validation values sorted.
std::vector<std::pair<std::string, LogValue>> barOrder(const Logs &logs) {
  std::vector<std::pair<std::string, LogValue>> out;
  auto add = [&](bool val) {
    std::string lossKey = val ? "val_loss" : "loss";
    if (auto it = logs.find(lossKey); it != logs.end())
      out.emplace_back(*it);
    for (const auto &[key, value] : logs)
      if (key != lossKey && (key.rfind("val_", 0) == 0) == val)
        out.emplace_back(key, value);
  };
  add(false);
  add(true);
  return out;
}
} // namespace

/// Keras's Progbar time per step: "2s/step", "13ms/step", "162us/step".
static std::string stepTimeText(double seconds) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (seconds >= 1 || seconds == 0)
    os << llvm::format("%.0fs/step", seconds);
  else if (seconds >= 1e-3)
    os << llvm::format("%.0fms/step", seconds * 1e3);
  else
    os << llvm::format("%.0fus/step", seconds * 1e6);
  return text;
}

ProgbarLogger::ProgbarLogger(llvm::raw_ostream &os, int verbose, int64_t epochs,
                             int64_t stepsPerEpoch)
    : os_(os), verbose_(verbose), epochs_(epochs), steps_(stepsPerEpoch),
      // A rank under mpirun writes to the launcher's pseudo-terminal even
      // when the job's output goes to a file: redraw only alone.
      live_(verbose == 1 && os.is_displayed() && collectives::size() == 1) {}

void ProgbarLogger::onEpochBegin(int64_t epoch, Logs &) {
  os_ << "Epoch " << epoch + 1 << "/" << epochs_ << "\n";
  os_.flush();
  seen_ = 0;
  start_ = lastDraw_ = Clock::now();
}

void ProgbarLogger::onBatchEnd(int64_t batch, Logs &logs) {
  seen_ = batch + 1;
  if (!live_)
    return;
  auto now = Clock::now();
  if (now - lastDraw_ < std::chrono::milliseconds(100))
    return;
  lastDraw_ = now;
  draw(seen_, logs, /*finished=*/false);
}

void ProgbarLogger::onEpochEnd(int64_t, Logs &logs) {
  draw(seen_, logs, /*finished=*/true);
}

void ProgbarLogger::draw(int64_t done, const Logs &logs, bool finished) {
  double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  int64_t perStepDiv = std::max<int64_t>(1, done);
  int digits = std::to_string(steps_).size();
  if (verbose_ == 2) {
    os_ << done << "/" << steps_ << " - " << llvm::format("%.0fs - ", seconds)
        << stepTimeText(seconds / perStepDiv);
  } else {
    constexpr int width = 30;
    int filled = static_cast<int>(width * done / std::max<int64_t>(1, steps_));
    std::string bar(filled, '=');
    if (filled < width) {
      bar += '>';
      bar += std::string(width - filled - 1, '.');
    }
    if (live_)
      os_ << '\r';
    os_ << llvm::format_decimal(done, digits) << "/" << steps_ << " [" << bar
        << "] - ";
    if (finished)
      os_ << llvm::format("%.0fs ", seconds)
          << stepTimeText(seconds / perStepDiv);
    else
      os_ << "ETA: "
          << llvm::format("%.0fs", seconds / perStepDiv * (steps_ - done));
  }
  for (const auto &[name, value] : barOrder(logs))
    os_ << " - " << name << ": " << formatLogValue(value.mean());
  if (finished)
    os_ << '\n';
  else
    os_ << "\x1b[K"; // clear what a longer line left behind
  os_.flush();
}

// ---- TerminateOnNaN --------------------------------------------------------

void TerminateOnNaN::onBatchEnd(int64_t batch, Logs &logs) {
  auto it = logs.find("loss");
  if (it == logs.end() || std::isfinite(it->second.number()))
    return;
  stoppedAtBatch = batch;
  terminate(batch, it->second.number());
  trainer().stopTraining = true;
}

void TerminateOnNaN::terminate(int64_t batch, double) {
  llvm::outs() << "Batch " << batch << ": Invalid loss, terminating training\n";
  llvm::outs().flush();
}

// ---- CSVLogger -------------------------------------------------------------

CSVLogger::CSVLogger(std::string filename, char separator, bool append)
    : filename_(std::move(filename)), separator_(separator), append_(append) {}

void CSVLogger::onTrainBegin(Logs &) {
  keys_.reset();
  writeHeader_ = true;
  if (append_) {
    std::ifstream existing(filename_);
    std::string first;
    if (existing && std::getline(existing, first) && !first.empty())
      writeHeader_ = false;
  }
  file_.open(filename_, append_ ? std::ios::app : std::ios::trunc);
  if (!file_)
    throw Error(filename_ + ": cannot open the CSV log for writing");
}

void CSVLogger::onEpochEnd(int64_t epoch, Logs &logs) {
  if (!keys_) {
    keys_.emplace();
    for (const auto &[key, value] : logs) // a std::map: sorted
      keys_->push_back(key);
    if (writeHeader_) {
      file_ << "epoch";
      for (const std::string &k : *keys_)
        file_ << separator_ << k;
      file_ << "\r\n";
    }
  }
  file_ << epoch;
  for (const std::string &k : *keys_) {
    auto it = logs.find(k);
    if (it == logs.end())
      file_ << separator_ << "NA";
    else if (it->second.isList())
      // Keras's handle_value gives '"[...]"'; csv.writer doubles the
      // quotes and quotes the field.
      file_ << separator_ << "\"\"\"" << it->second.str() << "\"\"\"";
    else
      file_ << separator_ << pythonFloatRepr(it->second.number());
  }
  file_ << "\r\n";
  file_.flush();
  if (!file_)
    throw Error(filename_ + ": cannot write the CSV log");
}

void CSVLogger::onTrainEnd(Logs &) {
  if (file_.is_open())
    file_.close();
}
