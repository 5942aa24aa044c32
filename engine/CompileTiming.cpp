//===- CompileTiming.cpp - One time report for a whole compile ------------===//

#include "engine/CompileTiming.h"

#include "mlir/Pass/PassManager.h"

#include <mutex>

using namespace kcc;

namespace {

/// The process-wide report. The root timer runs while any top-level phase
/// does, so the total is the time spent compiling.
struct Report {
  std::mutex mutex;
  mlir::DefaultTimingManager manager;
  mlir::Timer root;
  /// Top-level phases running now (on any thread).
  int running = 0;
};

Report &report() {
  // Leaked on purpose: printing from a static destructor at exit would race
  // LLVM's own teardown; the driver prints explicitly.
  static Report *r = new Report;
  return *r;
}

/// The innermost phase running on this thread.
thread_local CompilePhase *innermost = nullptr;

} // namespace

void kcc::enableCompileTiming(bool enabled, bool cliOptions) {
  Report &r = report();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (cliOptions)
    mlir::applyDefaultTimingManagerCLOptions(r.manager);
  if (enabled)
    r.manager.setEnabled(true);
  r.root = r.manager.getRootTimer();
}

CompilePhase::CompilePhase(llvm::StringRef name) : parent_(innermost) {
  Report &r = report();
  if (!r.manager.isEnabled())
    return;
  if (parent_ && parent_->running_) {
    scope_ = parent_->scope_.nest(name);
  } else {
    std::lock_guard<std::mutex> lock(r.mutex);
    if (r.running++ == 0)
      r.root.start();
    scope_ = mlir::TimingScope(r.root.nest(name));
  }
  running_ = true;
  innermost = this;
}

CompilePhase::~CompilePhase() {
  if (!running_)
    return;
  scope_.stop();
  innermost = parent_;
  if (parent_ && parent_->running_)
    return;
  Report &r = report();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (--r.running == 0)
    r.root.stop();
}

void CompilePhase::timePasses(mlir::PassManager &pm) {
  if (running_)
    pm.enableTiming(scope_);
}

void kcc::printCompileTimeReport() {
  Report &r = report();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.manager.isEnabled())
    return;
  r.manager.print();
  // print() clears the timers, the root included.
  r.root = r.manager.getRootTimer();
}
