//===- InterpretedBackend.cpp - Functions run op by op --------------------===//
//
// The eager baseline: params and state move into the argument list and the
// interpreter's results move back into the bound values, one kernel call and
// one buffer per op (pooled, engine/interpreter/BufferPool.h), as an eager
// runtime does.
//
//===----------------------------------------------------------------------===//

#include "engine/Backend.h"
#include "engine/interpreter/Interpreter.h"

using namespace kcc;

namespace {

class InterpretedBackend final : public Backend {
public:
  explicit InterpretedBackend(const StepFunctions &functions)
      : functions_(functions) {}
  ~InterpretedBackend() override { interpreter_.clearConstantCache(); }

  void step(BoundValues &values, const std::vector<NDArray> &inputs,
            const std::vector<NDArray> &targets, const NDArray &weight,
            StepResult &result) override {
    const TrainStepLayout &l = *functions_.layout;
    std::vector<NDArray> args(functions_.train.getNumArguments());
    // Params and state move in and come back as results: no step copies them.
    for (unsigned i = 0; i < l.numParams; ++i)
      args[i] = std::move(values.params[i]);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      args[l.numParams + i] = std::move(values.state[i]);
    args[l.iterationsArg()] = values.iterations;
    args[l.learningRateArg()] = values.lr;
    for (unsigned i = 0; i < l.numInputs; ++i)
      args[l.firstInputArg() + i] = inputs[i];
    for (unsigned i = 0; i < l.numTargets; ++i)
      args[l.targetArg() + i] = targets[i];
    if (l.sampleWeight)
      args[l.sampleWeightArg()] = weight;
    std::vector<NDArray> results = interpreter_.run(functions_.train, args);
    result.loss = results[l.lossResult()].at(0);
    for (unsigned i = 0; i < l.metrics.size(); ++i)
      readMetric(results[l.firstMetricResult() + i], result, i);
    for (unsigned i = 0; i < l.numParams; ++i)
      values.params[i] = std::move(results[l.firstParamResult() + i]);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      values.state[i] = std::move(results[l.firstStateResult() + i]);
    values.iterations = std::move(results[l.iterationsResult()]);
  }

  void forward(const std::vector<NDArray> &args,
               std::vector<NDArray> &outs) override {
    std::vector<NDArray> results = interpreter_.run(functions_.forward, args);
    for (size_t i = 0; i < outs.size(); ++i)
      outs[i] = std::move(results.at(i));
  }

  void addStats(ExecStats &s, const BoundValues &) const override {
    const InterpreterStats &is = interpreter_.stats();
    s.opsDispatched = is.opsDispatched;
    s.buffersAllocated = is.buffersAllocated;
    s.bytesAllocated = is.bytesAllocated;
    s.peakLiveBytes = is.peakLiveBytes;
  }

private:
  StepFunctions functions_;
  Interpreter interpreter_;
};

} // namespace

Backend::~Backend() = default;

std::unique_ptr<Backend>
kcc::createInterpretedBackend(const StepFunctions &functions) {
  return std::make_unique<InterpretedBackend>(functions);
}
