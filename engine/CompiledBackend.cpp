//===- CompiledBackend.cpp - Functions JIT-compiled for the CPU -----------===//
//
// Binding: @train_step(params, state, iterations, lr, inputs, targets[,
// sample_weight]) ->
// (loss, metrics, params', state', iterations'). The step writes each
// parameter, optimizer slot and the counter over its own argument where
// kc-mark-in-place proved that safe (all of them, for the optimizers kcc
// builds); a slot it could not prove gets a result buffer of its own,
// copied back after the step. No step allocates.
//
//===----------------------------------------------------------------------===//

#include "engine/Backend.h"
#include "engine/CompileCache.h"
#include "runtime/Error.h"
#include "runtime/MemoryBudget.h"

#include <algorithm>
#include <cstring>

using namespace kcc;

namespace {

/// Per slot of the step (params, then state, then iterations): whether the
/// compiled step writes its update over the argument.
std::vector<bool> slotsInPlace(const CompiledFunction &fn,
                               const TrainStepLayout &l) {
  const auto &pairs = fn.inPlaceResults();
  auto proven = [&](unsigned result, unsigned arg) {
    return std::find(pairs.begin(), pairs.end(), std::make_pair(result, arg)) !=
           pairs.end();
  };
  std::vector<bool> slots;
  for (unsigned i = 0; i < l.numParams; ++i)
    slots.push_back(proven(l.firstParamResult() + i, i));
  for (unsigned i = 0; i < l.numOptimizerState; ++i)
    slots.push_back(proven(l.firstStateResult() + i, l.numParams + i));
  slots.push_back(proven(l.iterationsResult(), l.iterationsArg()));
  return slots;
}

int64_t boundBytes(const std::vector<NDArray> &arrays) {
  int64_t bytes = 0;
  for (const NDArray &a : arrays)
    bytes += a.defined() ? a.bytes() : 0;
  return bytes;
}

class CompiledBackend final : public Backend {
public:
  CompiledBackend(const StepFunctions &functions, const ExecOptions &options)
      : functions_(functions), options_(options) {
    if (!functions_.train)
      return;
    CompileCache::Result r = compile("train_step");
    train_ = r.function;
    compileSeconds_ = r.seconds;
    fromCache_ = r.hit;
    const TrainStepLayout &l = *functions_.layout;
    inPlace_ = slotsInPlace(*train_, l);
    // A result buffer of its own only for the slots not updated in place,
    // and the loss and metrics; checked together before any is allocated.
    const std::vector<TensorSpec> &results = train_->resultSpecs();
    std::optional<int64_t> bytes = 0;
    for (unsigned slot = 0; slot < inPlace_.size(); ++slot)
      if (!inPlace_[slot] && bytes)
        bytes =
            addChecked(*bytes, tensorBytes(results[resultOfSlot(slot)].shape,
                                           results[resultOfSlot(slot)].dtype));
    for (unsigned i = 0; i < l.firstParamResult() && bytes; ++i)
      bytes =
          addChecked(*bytes, tensorBytes(results[i].shape, results[i].dtype));
    if (!bytes)
      throw Error("executable: the step's result buffers need more than "
                  "2^63-1 bytes");
    requireMemory(*bytes, "executable: the step's result buffers");
    scratch_.resize(inPlace_.size());
    for (unsigned slot = 0; slot < inPlace_.size(); ++slot)
      if (!inPlace_[slot]) {
        const TensorSpec &s = results[resultOfSlot(slot)];
        scratch_[slot] = NDArray::empty(s.shape, s.dtype);
      }
    args_.resize(functions_.train.getNumArguments());
    outs_.resize(functions_.train.getNumResults());
    for (unsigned i = 0; i < l.firstParamResult(); ++i)
      outs_[i] = NDArray::empty(results[i].shape, results[i].dtype);
  }

  void step(BoundValues &values, const std::vector<NDArray> &inputs,
            const std::vector<NDArray> &targets, const NDArray &weight,
            StepResult &result) override {
    const TrainStepLayout &l = *functions_.layout;
    // Each slot's result goes over its argument where the step updates it
    // in place, else into its scratch buffer, copied back below.
    auto bind = [&](unsigned slot, NDArray &value) {
      args_[slot] = value;
      outs_[resultOfSlot(slot)] = inPlace_[slot] ? value : scratch_[slot];
    };
    forEachSlot(values, bind);
    args_[l.learningRateArg()] = values.lr;
    for (unsigned i = 0; i < l.numInputs; ++i)
      args_[l.firstInputArg() + i] = inputs[i];
    for (unsigned i = 0; i < l.numTargets; ++i)
      args_[l.targetArg() + i] = targets[i];
    if (l.sampleWeight)
      args_[l.sampleWeightArg()] = weight;
    train_->runInto(args_, outs_);
    forEachSlot(values, [&](unsigned slot, NDArray &value) {
      if (!inPlace_[slot])
        std::memcpy(value.rawData(), scratch_[slot].rawData(), value.bytes());
    });
    result.loss = outs_[l.lossResult()].at(0);
    for (unsigned i = 0; i < l.metrics.size(); ++i)
      readMetric(outs_[l.firstMetricResult() + i], result, i);
    // The batch is the caller's: do not keep it alive.
    for (unsigned i = 0; i < l.numInputs; ++i)
      args_[l.firstInputArg() + i] = NDArray();
    for (unsigned i = 0; i < l.numTargets; ++i)
      args_[l.targetArg() + i] = NDArray();
    if (l.sampleWeight)
      args_[l.sampleWeightArg()] = NDArray();
  }

  void forward(const std::vector<NDArray> &args,
               std::vector<NDArray> &outs) override {
    if (!forward_)
      forward_ = compile("forward").function;
    forward_->runInto(args, outs);
  }

  void addStats(ExecStats &s, const BoundValues &values) const override {
    const CompiledFunction *fn = train_ ? train_.get() : forward_.get();
    if (fn) {
      s.libraryCallsPerStep = fn->kernelCount().libraryCalls;
      s.loopNestsPerStep = fn->kernelCount().loopNests;
      if (const auto &plan = fn->memoryPlan()) {
        s.intermediateBytes = plan->sumBytes;
        s.arenaBytes = plan->arenaBytes;
        s.arenaLowerBoundBytes = plan->lowerBoundBytes;
      }
    }
    // Params, state and the counter, their scratch buffers, the learning
    // rate and the loss/metric outputs (the slots' outputs alias the rest).
    s.boundBytes = boundBytes(values.params) + boundBytes(values.state) +
                   boundBytes(scratch_) +
                   boundBytes({values.iterations, values.lr});
    if (functions_.layout)
      for (unsigned i = 0; i < functions_.layout->firstParamResult(); ++i)
        s.boundBytes += outs_[i].bytes();
    s.compileSeconds = compileSeconds_;
    s.fromCache = fromCache_;
  }

private:
  CompileCache::Result compile(llvm::StringRef name) {
    return options_.useCache
               ? CompileCache::global().getOrCompile(functions_.module, name,
                                                     options_.cpu, options_.log)
               : CompileCache::compileUncached(functions_.module, name,
                                               options_.cpu, options_.log);
  }

  /// Slots are numbered like @train_step's leading arguments: params, state,
  /// then the counter.
  unsigned resultOfSlot(unsigned slot) const {
    const TrainStepLayout &l = *functions_.layout;
    if (slot < l.numParams)
      return l.firstParamResult() + slot;
    if (slot < l.iterationsArg())
      return l.firstStateResult() + (slot - l.numParams);
    return l.iterationsResult();
  }

  template <typename Fn> void forEachSlot(BoundValues &values, Fn fn) {
    const TrainStepLayout &l = *functions_.layout;
    for (unsigned i = 0; i < l.numParams; ++i)
      fn(i, values.params[i]);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      fn(l.numParams + i, values.state[i]);
    fn(l.iterationsArg(), values.iterations);
  }

  StepFunctions functions_;
  ExecOptions options_;
  std::shared_ptr<const CompiledFunction> train_, forward_;
  std::vector<bool> inPlace_;
  /// Per slot, the result buffer of a slot not updated in place.
  std::vector<NDArray> scratch_;
  // The step's argument and output lists, reused every step.
  std::vector<NDArray> args_, outs_;
  double compileSeconds_ = 0;
  bool fromCache_ = false;
};

} // namespace

std::unique_ptr<Backend>
kcc::createCompiledBackend(const StepFunctions &functions,
                           const ExecOptions &options) {
  return std::make_unique<CompiledBackend>(functions, options);
}
