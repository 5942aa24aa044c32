//===- Executable.h - A training step, compiled or interpreted --*- C++ -*-===//
//
// The engine's one interface to a training step. An Executable is built
// from a module holding @train_step (built by buildTrainPipeline) and/or an
// inference @forward, owns the parameters, the optimizer state and the step
// count, and runs the step through one of two backends (engine/Backend.h):
// JIT-compiled (CompiledFunction, through the process-wide CompileCache) or
// op by op (Interpreter). Switching is one setting, ExecOptions::mode; the
// bound values, the calling convention and the results are the same either
// way.
//
//   Executable exe(ctx, std::move(module), model.getWeights(), options);
//   StepResult r = exe.step(x, y);           // r.loss, r.metrics
//   NDArray probs = exe.predict(images);     // any number of rows
//
// Compiled steps allocate nothing: params, state and the counter are
// written over their arguments where kc-mark-in-place proved that safe.
// Shapes are static (the batch included); a step with another batch throws
// kcc::Error.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_EXECUTABLE_H
#define KCC_ENGINE_EXECUTABLE_H

#include "config/TrainingConfig.h"
#include "engine/CompiledFunction.h"
#include "runtime/NDArray.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kcc {

struct ExecOptions {
  ExecMode mode = ExecMode::Compiled;
  /// Code generation for the host CPU (compiled mode).
  CpuOptions cpu;
  /// The initial learning rate.
  double learningRate = OptimizerConfig().resolvedLearningRate();
  /// Where each compile is reported in one line ("kcc: compiled train_step
  /// for batch 64 in 812 ms"); null is silent.
  llvm::raw_ostream *log = &llvm::errs();
  /// Look compiled functions up in (and add them to) CompileCache::global().
  bool useCache = true;
};

/// The loss and the metrics of one step, in the order of metricNames().
struct StepResult {
  double loss = 0;
  /// Each metric over this batch: a batch mean, or a stateful metric's
  /// value from this batch's statistics alone.
  std::vector<double> metrics;
  /// Per metric: a stateful metric's statistics of this batch (what an
  /// epoch sums before metricResult), empty for a batch mean.
  std::vector<std::vector<double>> statistics;
};

/// What an Executable did. Compiled fields are static counts of the lowered
/// @train_step (the same every step); interpreted fields are totals over
/// every step and predict run so far.
struct ExecStats {
  ExecMode mode = ExecMode::Compiled;
  int64_t steps = 0;
  // Compiled: kernels launched per step, as kc-count-kernels counted them in
  // the lowering that was compiled (after every fusion): every call to a
  // kcc_rt_* library entry (GEMM, convolution, pooling) is one kernel, every
  // top-level loop nest of generated code another.
  int64_t libraryCallsPerStep = 0;
  int64_t loopNestsPerStep = 0;
  int64_t kernelsPerStep() const {
    return libraryCallsPerStep + loopNestsPerStep;
  }
  /// Buffers the Executable holds for the step: both sets of params, state
  /// and iterations, the loss/metric outputs and the scalar inputs.
  int64_t boundBytes = 0;
  /// The intermediate buffers of one step each on its own (kc-plan-memory's
  /// unshared sum), and the arena they share.
  int64_t intermediateBytes = 0;
  int64_t arenaBytes = 0;
  /// The most bytes of intermediates live at once: no arena is smaller.
  int64_t arenaLowerBoundBytes = 0;
  double compileSeconds = 0; ///< 0 on a cache hit
  bool fromCache = false;
  // Interpreted (totals).
  int64_t opsDispatched = 0;
  int64_t buffersAllocated = 0;
  int64_t bytesAllocated = 0;
  int64_t peakLiveBytes = 0;
};

class Executable {
public:
  /// Binds `params` (copied, in @train_step / @forward parameter order) to
  /// the functions of `module`; optimizer state starts at zero. `context`
  /// is kept alive as long as the Executable. In compiled mode @train_step
  /// is compiled here (or found in the cache), @forward on first predict.
  /// Throws kcc::Error when the module has neither function, the layout is
  /// malformed or a parameter's shape does not match.
  Executable(std::shared_ptr<mlir::MLIRContext> context,
             mlir::OwningOpRef<mlir::ModuleOp> module,
             const std::vector<NDArray> &params, ExecOptions options = {});
  Executable(Executable &&) noexcept;
  Executable &operator=(Executable &&) noexcept;
  ~Executable();

  ExecMode mode() const;
  bool hasTrainStep() const;
  /// The static batch of @train_step (or of @forward without one).
  int64_t batchSize() const;

  /// One training step on a batch (shapes and dtypes as @train_step's input
  /// and target): updates params, state and iterations in place. A step
  /// built with sample weights (TrainingConfig::sampleWeight) takes them
  /// from the overload below; this one then weighs every example 1.
  StepResult step(const NDArray &x, const NDArray &y);
  /// One step with per-example weights `w` ([batch], cast to f32), reduced
  /// as Keras does. Throws kcc::Error when the step takes no weights (build
  /// it with TrainingConfig::sampleWeight) or `w` has another shape.
  StepResult step(const NDArray &x, const NDArray &y, const NDArray &w);
  /// A step of a model with several inputs or outputs: one array per
  /// input (@forward's input order) and per target (its result order),
  /// checked like the single ones; `w` as above (undefined: none).
  StepResult step(const std::vector<NDArray> &inputs,
                  const std::vector<NDArray> &targets,
                  const NDArray &w = NDArray());
  /// Whether @train_step takes per-example weights.
  bool hasSampleWeight() const;
  const std::vector<std::string> &metricNames() const;
  /// Per metric of metricNames(): the stateful metric whose statistics
  /// StepResult::statistics holds, or none for a batch mean.
  const std::vector<std::optional<MetricConfig>> &statefulMetrics() const;
  /// The input and the target @train_step takes (batch rows first); the
  /// first of each when it takes several.
  TensorSpec inputSpec() const;
  TensorSpec targetSpec() const;
  /// Every input and every target, in order.
  std::vector<TensorSpec> inputSpecs() const;
  std::vector<TensorSpec> targetSpecs() const;

  /// @forward on `x` of any number of rows: runs full batches and pads the
  /// last one with zeros (padded rows are dropped from the result).
  NDArray predict(const NDArray &x);
  /// @forward with several inputs (one array each, of the same rows) and
  /// outputs: one prediction per output, in @forward's result order.
  std::vector<NDArray> predict(const std::vector<NDArray> &inputs);

  /// Parameter names ("dense/kernel"), in binding order.
  const std::vector<std::string> &weightNames() const;
  /// Copies of the current values.
  std::vector<NDArray> getWeights() const;
  NDArray getWeight(const std::string &name) const;
  /// Copies into the bound buffers; shapes and dtypes must match.
  void setWeights(const std::vector<NDArray> &values);
  void setWeight(const std::string &name, const NDArray &value);

  /// Optimizer state (copies) and its replacement, e.g. to carry it to an
  /// Executable of another batch size.
  std::vector<NDArray> getOptimizerState() const;
  void setOptimizerState(const std::vector<NDArray> &values);
  int64_t iterations() const;
  void setIterations(int64_t iterations);

  /// The %lr the step receives. Under a learning-rate schedule the step
  /// computes its own rate from the iteration count: learningRate() is the
  /// schedule's initial rate and setting another throws, as Keras refuses.
  void setLearningRate(double lr);
  double learningRate() const;

  ExecStats stats() const;
  /// The module (@train_step, @forward) as text.
  std::string moduleText() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace kcc

#endif // KCC_ENGINE_EXECUTABLE_H
