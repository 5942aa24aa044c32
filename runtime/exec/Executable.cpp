//===- Executable.cpp - A training step, compiled or interpreted ----------===//
//
// Binding: @train_step(params, state, iterations, lr, inputs, target) ->
// (loss, metrics, params', state', iterations'). Compiled, the step writes
// each parameter, optimizer slot and the counter over its own argument
// where kc-mark-in-place proved that safe (all of them, for the optimizers
// kcc builds); a slot it could not prove gets a result buffer of its own,
// copied back after the step. No step allocates a weight. Interpreted, params and state move into the
// argument list and the interpreter's results move back into the slots, as
// an eager runtime does (one allocation per op).
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/Executable.h"

#include "passes/TrainStep.h"
#include "runtime/Error.h"
#include "runtime/exec/CompileCache.h"
#include "runtime/exec/KernelCounts.h"
#include "runtime/interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <optional>

using namespace kcc;

namespace {

TensorSpec specOf(mlir::Type type) {
  auto t = mlir::cast<mlir::RankedTensorType>(type);
  return {Shape(t.getShape().begin(), t.getShape().end()),
          dtypeOf(t.getElementType())};
}

std::string describe(const NDArray &a) {
  return a.defined() ? std::string(dtypeName(a.dtype())) + " " +
                           shapeToString(a.shape())
                     : "an undefined array";
}

void checkMatches(const NDArray &a, const TensorSpec &spec,
                  const std::string &what) {
  if (!a.defined() || a.shape() != spec.shape || a.dtype() != spec.dtype)
    throw Error(what + " must be " + dtypeName(spec.dtype) + " " +
                shapeToString(spec.shape) + ", got " + describe(a));
}

/// `a` with `spec`'s dtype (labels often arrive as another integer type).
NDArray withDType(const NDArray &a, const TensorSpec &spec,
                  const std::string &what) {
  if (a.defined() && a.shape() == spec.shape && a.dtype() != spec.dtype)
    return a.to(spec.dtype);
  checkMatches(a, spec, what);
  return a;
}

/// Per slot of the step (params, then state, then iterations): whether the
/// compiled step writes its update over the argument (kc-mark-in-place
/// proved it safe; CpuOptions::inPlaceUpdates applied it).
std::vector<bool> slotsInPlace(const CompiledFunction &fn,
                               const TrainStepLayout &l) {
  const auto &pairs = fn.inPlaceResults();
  auto proven = [&](unsigned result, unsigned arg) {
    return std::find(pairs.begin(), pairs.end(),
                     std::make_pair(result, arg)) != pairs.end();
  };
  std::vector<bool> slots;
  for (unsigned i = 0; i < l.numParams; ++i)
    slots.push_back(proven(l.firstParamResult() + i, i));
  for (unsigned i = 0; i < l.numOptimizerState; ++i)
    slots.push_back(proven(l.firstStateResult() + i, l.numParams + i));
  slots.push_back(proven(l.iterationsResult(), l.iterationsArg()));
  return slots;
}

} // namespace

struct Executable::Impl {
  /// Declared first so it is destroyed last, after everything holding IR.
  std::shared_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ExecOptions options;

  mlir::func::FuncOp train, forward;
  std::optional<TrainStepLayout> layout;
  std::vector<std::string> names, metrics;
  std::vector<TensorSpec> paramSpecs;

  // Bound values, set 0. Set 1 holds, compiled, the result buffers of the
  // slots the step does not update in place (copied back after each step);
  // those slots are undefined in set 1 otherwise.
  std::vector<NDArray> params[2], state[2];
  NDArray iterations[2];
  NDArray lr;
  int cur = 0;
  std::vector<bool> inPlace; ///< per slot, see slotsInPlace
  // Compiled step's argument and output lists, reused every step.
  std::vector<NDArray> args, outs;

  std::shared_ptr<const CompiledFunction> trainFn, forwardFn;
  std::unique_ptr<Interpreter> interpreter;
  // predict's padded batch and output, reused.
  NDArray predictIn, predictOut;

  int64_t steps = 0;
  double compileSeconds = 0;
  bool fromCache = false;
  mutable std::optional<KernelCounts> counts;

  ~Impl() {
    if (interpreter)
      interpreter->clearConstantCache();
  }

  bool compiled() const { return options.mode == ExecMode::Compiled; }

  CompileCache::Result compile(llvm::StringRef name) {
    // The step writes params, state and iterations over their arguments
    // where that is proven safe (see updatesInPlace).
    CpuOptions cpu = options.cpu;
    cpu.inPlaceUpdates = true;
    return options.useCache
               ? CompileCache::global().getOrCompile(*module, name, cpu,
                                                     options.log)
               : CompileCache::compileUncached(*module, name, cpu,
                                               options.log);
  }

  unsigned paramIndex(const std::string &name) const {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      throw Error("executable: no weight named '" + name + "'");
    return static_cast<unsigned>(it - names.begin());
  }
};

Executable::Executable(std::shared_ptr<mlir::MLIRContext> context,
                       mlir::OwningOpRef<mlir::ModuleOp> module,
                       const std::vector<NDArray> &params, ExecOptions options)
    : impl_(std::make_unique<Impl>()) {
  Impl &m = *impl_;
  m.context = std::move(context);
  m.module = std::move(module);
  m.options = std::move(options);
  if (!m.module)
    throw Error("executable: no module");
  m.train = m.module->lookupSymbol<mlir::func::FuncOp>("train_step");
  m.forward = m.module->lookupSymbol<mlir::func::FuncOp>("forward");
  if (!m.train && !m.forward)
    throw Error("executable: the module has neither @train_step nor @forward");

  // Parameter names and types: @train_step's leading arguments, else
  // @forward's arguments that are neither inputs nor the step counter.
  if (m.train) {
    m.layout = getTrainStepLayout(m.train);
    if (!m.layout)
      throw Error("executable: @train_step has no valid kc.train_step layout");
    m.metrics = m.layout->metrics;
    for (unsigned i = 0; i < m.layout->numParams; ++i) {
      auto name = m.train.getArgAttrOfType<mlir::StringAttr>(i, "kc.name");
      m.names.push_back(name ? name.str() : "param_" + std::to_string(i));
      m.paramSpecs.push_back(specOf(m.train.getArgument(i).getType()));
    }
  } else {
    for (unsigned i = 0; i < m.forward.getNumArguments(); ++i) {
      if (m.forward.getArgAttr(i, "kc.input") ||
          m.forward.getArgAttr(i, "kc.step"))
        continue;
      auto name = m.forward.getArgAttrOfType<mlir::StringAttr>(i, "kc.name");
      m.names.push_back(name ? name.str()
                             : "param_" + std::to_string(m.names.size()));
      m.paramSpecs.push_back(specOf(m.forward.getArgument(i).getType()));
    }
  }
  if (params.size() != m.paramSpecs.size())
    throw Error("executable: expected " + std::to_string(m.paramSpecs.size()) +
                " parameters, got " + std::to_string(params.size()));
  for (size_t i = 0; i < params.size(); ++i) {
    checkMatches(params[i], m.paramSpecs[i], "parameter '" + m.names[i] + "'");
    m.params[0].push_back(params[i].clone());
  }

  if (m.compiled()) {
    if (m.train) {
      CompileCache::Result r = m.compile("train_step");
      m.trainFn = r.function;
      m.inPlace = slotsInPlace(*m.trainFn, *m.layout);
      for (size_t i = 0; i < m.paramSpecs.size(); ++i)
        m.params[1].push_back(m.inPlace[i] ? NDArray()
                                           : NDArray::empty(m.paramSpecs[i].shape,
                                                            m.paramSpecs[i].dtype));
      m.compileSeconds = r.seconds;
      m.fromCache = r.hit;
      m.args.resize(m.train.getNumArguments());
      m.outs.resize(m.train.getNumResults());
      for (unsigned i = 0; i < m.layout->firstParamResult(); ++i) {
        const TensorSpec &s = m.trainFn->resultSpecs()[i];
        m.outs[i] = NDArray::empty(s.shape, s.dtype);
      }
    }
  } else {
    m.interpreter = std::make_unique<Interpreter>();
  }
  if (m.train) {
    const TrainStepLayout &l = *m.layout;
    // A result buffer of its own only for the slots not updated in place.
    auto separate = [&](unsigned slot) {
      return m.compiled() && !m.inPlace[slot];
    };
    for (unsigned i = 0; i < l.numOptimizerState; ++i) {
      TensorSpec s = specOf(m.train.getArgument(l.numParams + i).getType());
      m.state[0].push_back(NDArray::zeros(s.shape, s.dtype));
      m.state[1].push_back(separate(l.numParams + i)
                               ? NDArray::zeros(s.shape, s.dtype)
                               : NDArray());
    }
    m.iterations[0] = NDArray::scalar(0, DType::I64);
    if (separate(l.numParams + l.numOptimizerState))
      m.iterations[1] = NDArray::scalar(0, DType::I64);
    m.lr = NDArray::scalar(
        m.options.learningRate,
        specOf(m.train.getArgument(l.learningRateArg()).getType()).dtype);
  }
}

Executable::Executable(Executable &&) noexcept = default;
Executable &Executable::operator=(Executable &&) noexcept = default;
Executable::~Executable() = default;

ExecMode Executable::mode() const { return impl_->options.mode; }
bool Executable::hasTrainStep() const { return bool(impl_->train); }
const std::vector<std::string> &Executable::metricNames() const {
  return impl_->metrics;
}
const std::vector<std::string> &Executable::weightNames() const {
  return impl_->names;
}

int64_t Executable::batchSize() const {
  return CompileCache::batchOf(impl_->train ? impl_->train : impl_->forward);
}

StepResult Executable::step(const NDArray &x, const NDArray &y) {
  Impl &m = *impl_;
  if (!m.train)
    throw Error("step: the executable has no @train_step");
  const TrainStepLayout &l = *m.layout;
  if (l.numInputs != 1)
    throw Error("step: @train_step takes " + std::to_string(l.numInputs) +
                " inputs; step(x, y) feeds one");
  TensorSpec xSpec = specOf(m.train.getArgument(l.firstInputArg()).getType());
  TensorSpec ySpec = specOf(m.train.getArgument(l.targetArg()).getType());
  checkMatches(x, xSpec, "step: the input batch");
  NDArray target = withDType(y, ySpec, "step: the target batch");

  StepResult result;
  result.metrics.resize(l.metrics.size());
  if (m.compiled()) {
    // Each slot's result goes over its argument where the step updates it
    // in place, else into set 1 and is copied back below.
    auto bind = [&](unsigned slot, NDArray &value, NDArray &scratch,
                    unsigned result) {
      m.args[slot] = value;
      m.outs[result] = m.inPlace[slot] ? value : scratch;
    };
    for (unsigned i = 0; i < l.numParams; ++i)
      bind(i, m.params[0][i], m.params[1][i], l.firstParamResult() + i);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      bind(l.numParams + i, m.state[0][i], m.state[1][i],
           l.firstStateResult() + i);
    bind(l.iterationsArg(), m.iterations[0], m.iterations[1],
         l.iterationsResult());
    m.args[l.learningRateArg()] = m.lr;
    m.args[l.firstInputArg()] = x;
    m.args[l.targetArg()] = target;
    m.trainFn->runInto(m.args, m.outs);
    auto copyBack = [&](unsigned slot, NDArray &value, NDArray &scratch) {
      if (!m.inPlace[slot])
        std::memcpy(value.rawData(), scratch.rawData(), value.bytes());
    };
    for (unsigned i = 0; i < l.numParams; ++i)
      copyBack(i, m.params[0][i], m.params[1][i]);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      copyBack(l.numParams + i, m.state[0][i], m.state[1][i]);
    copyBack(l.iterationsArg(), m.iterations[0], m.iterations[1]);
    result.loss = m.outs[l.lossResult()].at(0);
    for (unsigned i = 0; i < l.metrics.size(); ++i)
      result.metrics[i] = m.outs[l.firstMetricResult() + i].at(0);
    // The batch is the caller's: do not keep it alive.
    m.args[l.firstInputArg()] = NDArray();
    m.args[l.targetArg()] = NDArray();
  } else {
    std::vector<NDArray> args(m.train.getNumArguments());
    // Params and state move in and come back as results: no step copies them.
    for (unsigned i = 0; i < l.numParams; ++i)
      args[i] = std::move(m.params[0][i]);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      args[l.numParams + i] = std::move(m.state[0][i]);
    args[l.iterationsArg()] = m.iterations[0];
    args[l.learningRateArg()] = m.lr;
    args[l.firstInputArg()] = x;
    args[l.targetArg()] = target;
    std::vector<NDArray> results = m.interpreter->run(m.train, args);
    result.loss = results[l.lossResult()].at(0);
    for (unsigned i = 0; i < l.metrics.size(); ++i)
      result.metrics[i] = results[l.firstMetricResult() + i].at(0);
    for (unsigned i = 0; i < l.numParams; ++i)
      m.params[0][i] = std::move(results[l.firstParamResult() + i]);
    for (unsigned i = 0; i < l.numOptimizerState; ++i)
      m.state[0][i] = std::move(results[l.firstStateResult() + i]);
    m.iterations[0] = std::move(results[l.iterationsResult()]);
  }
  ++m.steps;
  return result;
}

NDArray Executable::predict(const NDArray &x) {
  Impl &m = *impl_;
  if (!m.forward)
    throw Error("predict: the executable has no @forward");
  std::vector<unsigned> inputArgs;
  for (unsigned i = 0; i < m.forward.getNumArguments(); ++i)
    if (m.forward.getArgAttr(i, "kc.input"))
      inputArgs.push_back(i);
  if (inputArgs.size() != 1 || m.forward.getNumResults() != 1)
    throw Error("predict: @forward must take one input and return one result");
  TensorSpec inSpec =
      specOf(m.forward.getArgument(inputArgs[0]).getType());
  TensorSpec outSpec = specOf(m.forward.getResultTypes()[0]);
  int64_t batch = inSpec.shape[0];
  Shape rowShape(inSpec.shape.begin() + 1, inSpec.shape.end());
  if (x.rank() < 1 || Shape(x.shape().begin() + 1, x.shape().end()) != rowShape ||
      x.dtype() != inSpec.dtype)
    throw Error("predict: @forward takes rows of " +
                std::string(dtypeName(inSpec.dtype)) + " " +
                shapeToString(rowShape) + ", got " + describe(x));
  if (m.compiled() && !m.forwardFn) {
    CompileCache::Result r = m.compile("forward");
    m.forwardFn = r.function;
  }

  int64_t n = x.dim(0);
  Shape resultShape = outSpec.shape;
  resultShape[0] = n;
  NDArray result = NDArray::empty(resultShape, outSpec.dtype);
  size_t inRow = x.bytes() / std::max<int64_t>(n, 1);
  size_t outRow = static_cast<size_t>(numElements(outSpec.shape) / batch) *
                  dtypeSize(outSpec.dtype);
  if (!m.predictIn.defined()) {
    m.predictIn = NDArray::empty(inSpec.shape, inSpec.dtype);
    m.predictOut = NDArray::empty(outSpec.shape, outSpec.dtype);
  }
  std::vector<NDArray> args(m.forward.getNumArguments());
  unsigned p = 0;
  for (unsigned i = 0; i < args.size(); ++i) {
    if (i == inputArgs[0])
      args[i] = m.predictIn;
    else if (m.forward.getArgAttr(i, "kc.step"))
      args[i] = m.iterations[m.cur].defined() ? m.iterations[m.cur]
                                              : NDArray::scalar(0, DType::I64);
    else
      args[i] = m.params[m.cur][p++];
  }
  for (int64_t start = 0; start < n; start += batch) {
    int64_t rows = std::min(batch, n - start);
    auto *dst = static_cast<char *>(m.predictIn.rawData());
    std::memcpy(dst, static_cast<const char *>(x.rawData()) + start * inRow,
                rows * inRow);
    if (rows < batch)
      std::memset(dst + rows * inRow, 0, (batch - rows) * inRow);
    if (m.compiled()) {
      std::vector<NDArray> outs = {m.predictOut};
      m.forwardFn->runInto(args, outs);
    } else {
      m.predictOut = m.interpreter->run(m.forward, args).at(0);
    }
    std::memcpy(static_cast<char *>(result.rawData()) + start * outRow,
                m.predictOut.rawData(), rows * outRow);
  }
  return result;
}

std::vector<NDArray> Executable::getWeights() const {
  std::vector<NDArray> out;
  for (const NDArray &p : impl_->params[impl_->cur])
    out.push_back(p.clone());
  return out;
}

NDArray Executable::getWeight(const std::string &name) const {
  return impl_->params[impl_->cur][impl_->paramIndex(name)].clone();
}

void Executable::setWeight(const std::string &name, const NDArray &value) {
  Impl &m = *impl_;
  unsigned i = m.paramIndex(name);
  checkMatches(value, m.paramSpecs[i], "setWeight: '" + name + "'");
  if (m.compiled())
    std::memcpy(m.params[m.cur][i].rawData(), value.rawData(), value.bytes());
  else
    m.params[0][i] = value.clone();
}

void Executable::setWeights(const std::vector<NDArray> &values) {
  Impl &m = *impl_;
  if (values.size() != m.names.size())
    throw Error("setWeights: expected " + std::to_string(m.names.size()) +
                " arrays, got " + std::to_string(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    checkMatches(values[i], m.paramSpecs[i], "setWeights: '" + m.names[i] + "'");
  for (size_t i = 0; i < values.size(); ++i)
    setWeight(m.names[i], values[i]);
}

std::vector<NDArray> Executable::getOptimizerState() const {
  std::vector<NDArray> out;
  for (const NDArray &s : impl_->state[impl_->cur])
    out.push_back(s.clone());
  return out;
}

void Executable::setOptimizerState(const std::vector<NDArray> &values) {
  Impl &m = *impl_;
  std::vector<NDArray> &slots = m.state[m.cur];
  if (values.size() != slots.size())
    throw Error("setOptimizerState: expected " + std::to_string(slots.size()) +
                " arrays, got " + std::to_string(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    checkMatches(values[i], {slots[i].shape(), slots[i].dtype()},
                 "setOptimizerState: slot " + std::to_string(i));
  for (size_t i = 0; i < values.size(); ++i)
    std::memcpy(slots[i].rawData(), values[i].rawData(), values[i].bytes());
}

int64_t Executable::iterations() const {
  const NDArray &it = impl_->iterations[impl_->cur];
  return it.defined() ? static_cast<int64_t>(it.at(0)) : 0;
}

void Executable::setIterations(int64_t iterations) {
  NDArray &it = impl_->iterations[impl_->cur];
  if (!it.defined())
    throw Error("setIterations: the executable has no @train_step");
  it.set(0, static_cast<double>(iterations));
}

void Executable::setLearningRate(double lr) {
  impl_->options.learningRate = lr;
  if (impl_->lr.defined())
    impl_->lr.set(0, lr);
}

double Executable::learningRate() const { return impl_->options.learningRate; }

ExecStats Executable::stats() const {
  const Impl &m = *impl_;
  ExecStats s;
  s.mode = m.options.mode;
  s.steps = m.steps;
  if (m.compiled()) {
    if (!m.counts)
      m.counts = countKernels(*m.module, m.train ? "train_step" : "forward",
                              m.options.cpu.fuseElementwise);
    s.libraryCallsPerStep = m.counts->libraryCalls;
    s.loopNestsPerStep = m.counts->loopNests;
    s.intermediateBytes = m.counts->intermediateBytes;
    for (int k = 0; k < 2; ++k) {
      for (const NDArray &a : m.params[k])
        s.boundBytes += a.defined() ? a.bytes() : 0;
      for (const NDArray &a : m.state[k])
        s.boundBytes += a.defined() ? a.bytes() : 0;
      if (m.iterations[k].defined())
        s.boundBytes += m.iterations[k].bytes();
    }
    if (m.lr.defined())
      s.boundBytes += m.lr.bytes();
    if (m.layout)
      for (unsigned i = 0; i < m.layout->firstParamResult(); ++i)
        s.boundBytes += m.outs[i].bytes();
    s.compileSeconds = m.compileSeconds;
    s.fromCache = m.fromCache;
  } else {
    const InterpreterStats &is = m.interpreter->stats();
    s.opsDispatched = is.opsDispatched;
    s.buffersAllocated = is.buffersAllocated;
    s.bytesAllocated = is.bytesAllocated;
    s.peakLiveBytes = is.peakLiveBytes;
  }
  return s;
}

std::string Executable::moduleText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  impl_->module->print(os);
  return text;
}
