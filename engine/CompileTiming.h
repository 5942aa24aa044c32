//===- CompileTiming.h - One time report for a whole compile ----*- C++ -*-===//
//
// `kcc --time-passes` times every phase of a compile in one MLIR timing
// report (mlir::DefaultTimingManager): each pass pipeline kcc runs (import,
// train step, kc-cpu-pipeline), pass by pass, then LLVM IR translation,
// LLVM's -O<n> pipeline, machine-code emission, linking the object into the
// JIT, and the compile cache's look-ups and stores. Compiles happen in the
// driver, in kcc::jit and in the Executable, so the report is process-wide:
// off by default, enabled once by the driver, printed once at the end.
//
//   {
//     CompilePhase phase("kc-cpu-pipeline");
//     mlir::PassManager pm(ctx);
//     phase.timePasses(pm);          // each pass nested under the phase
//     ...
//   }
//   printCompileTimeReport();        // kcc's main, after the command
//
// Phases nest as they are entered on a thread (a phase started inside
// another is its child), so the report reads as a tree of the compile. The
// report's total is the time spent inside phases (the root timer runs only
// while a phase does), so "Rest" is close to zero and a `kcc train` report
// leaves the training steps out.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_COMPILETIMING_H
#define KCC_ENGINE_COMPILETIMING_H

#include "mlir/Support/Timing.h"

#include "llvm/ADT/StringRef.h"

namespace mlir {
class PassManager;
} // namespace mlir

namespace kcc {

/// Turns the report on. With `cliOptions`, MLIR's --mlir-timing-display
/// (tree or list) and --mlir-output-format (text or json) apply, and
/// MLIR's own --mlir-timing turns it on as well. Call before the first
/// phase.
void enableCompileTiming(bool enabled, bool cliOptions = true);

/// One phase of a compile, timed from construction to destruction under the
/// innermost phase running on this thread (or at the top). Does nothing when
/// the report is off.
class CompilePhase {
public:
  explicit CompilePhase(llvm::StringRef name);
  ~CompilePhase();
  CompilePhase(const CompilePhase &) = delete;
  CompilePhase &operator=(const CompilePhase &) = delete;

  /// Times each pass `pm` runs, nested under this phase (nothing when off).
  /// The phase must outlive pm.run().
  void timePasses(mlir::PassManager &pm);

private:
  CompilePhase *parent_;
  bool running_ = false;
  mlir::TimingScope scope_;
};

/// Prints the report to stderr and clears it; nothing when off.
void printCompileTimeReport();

} // namespace kcc

#endif // KCC_ENGINE_COMPILETIMING_H
