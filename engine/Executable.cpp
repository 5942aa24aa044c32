//===- Executable.cpp - A training step, compiled or interpreted ----------===//
//
// The Executable binds values and checks what callers hand it; running the
// functions is the backend's (engine/Backend.h), chosen once from
// ExecOptions::mode.
//
//===----------------------------------------------------------------------===//

#include "engine/Executable.h"
#include "ir/KcAttributes.h"

#include "engine/Backend.h"
#include "engine/CompileCache.h"
#include "engine/interpreter/Interpreter.h" // dtypeOf
#include "runtime/Error.h"
#include "runtime/MemoryBudget.h"

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

} // namespace

struct Executable::Impl {
  /// Declared first so it is destroyed last, after everything holding IR.
  std::shared_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ExecOptions options;

  StepFunctions functions;
  std::vector<std::string> names, metrics;
  std::vector<std::optional<MetricConfig>> stateful;
  std::vector<TensorSpec> paramSpecs;
  BoundValues values;
  std::unique_ptr<Backend> backend;
  // predict's padded batches and outputs, reused.
  std::vector<NDArray> predictIn, predictOut;
  int64_t steps = 0;

  const TrainStepLayout &layout() const { return *functions.layout; }

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
  StepFunctions &f = m.functions;
  f.module = *m.module;
  f.train = m.module->lookupSymbol<mlir::func::FuncOp>("train_step");
  f.forward = m.module->lookupSymbol<mlir::func::FuncOp>("forward");
  if (!f.train && !f.forward)
    throw Error("executable: the module has neither @train_step nor @forward");

  // Parameter names and types: @train_step's leading arguments, else
  // @forward's arguments that are neither inputs nor the step counter.
  if (f.train) {
    f.layout = getTrainStepLayout(f.train);
    if (!f.layout)
      throw Error("executable: @train_step has no valid kc.train_step layout");
    m.metrics = f.layout->metrics;
    m.stateful.resize(m.metrics.size());
    for (size_t i = 0; i < f.layout->statistics.size(); ++i) {
      if (f.layout->statistics[i].empty())
        continue;
      llvm::Expected<MetricConfig> c = MetricConfig::parse(
          f.layout->statistics[i], LossKind::CategoricalCrossentropy);
      if (!c)
        throw Error("executable: metric '" + m.metrics[i] +
                    "': " + llvm::toString(c.takeError()));
      m.stateful[i] = *c;
    }
    for (unsigned i = 0; i < f.layout->numParams; ++i) {
      std::optional<llvm::StringRef> name = kc::getArgName(f.train, i);
      m.names.push_back(name ? name->str() : "param_" + std::to_string(i));
      m.paramSpecs.push_back(specOf(f.train.getArgument(i).getType()));
    }
  } else {
    for (unsigned i = 0; i < f.forward.getNumArguments(); ++i) {
      if (kc::isInputArg(f.forward, i) || kc::isStepArg(f.forward, i))
        continue;
      std::optional<llvm::StringRef> name = kc::getArgName(f.forward, i);
      m.names.push_back(name ? name->str()
                             : "param_" + std::to_string(m.names.size()));
      m.paramSpecs.push_back(specOf(f.forward.getArgument(i).getType()));
    }
  }
  if (params.size() != m.paramSpecs.size())
    throw Error("executable: expected " + std::to_string(m.paramSpecs.size()) +
                " parameters, got " + std::to_string(params.size()));
  for (size_t i = 0; i < params.size(); ++i)
    checkMatches(params[i], m.paramSpecs[i], "parameter '" + m.names[i] + "'");
  std::vector<TensorSpec> stateSpecs;
  if (f.train)
    for (unsigned i = 0; i < f.layout->numOptimizerState; ++i)
      stateSpecs.push_back(
          specOf(f.train.getArgument(f.layout->numParams + i).getType()));
  // The executable's own copy of the parameters and the optimizer slots,
  // checked together before any is allocated.
  std::optional<int64_t> bound = 0;
  for (const std::vector<TensorSpec> *specs : {&m.paramSpecs, &stateSpecs})
    for (const TensorSpec &s : *specs)
      if (bound)
        bound = addChecked(*bound, tensorBytes(s.shape, s.dtype));
  if (!bound)
    throw Error("executable: the parameters and optimizer state need more "
                "than 2^63-1 bytes");
  requireMemory(*bound, "executable: the parameters and optimizer state");
  for (const NDArray &p : params)
    m.values.params.push_back(p.clone());
  if (f.train) {
    // Each state tensor starts where its optimizer starts it (Adagrad's
    // accumulator, Nadam's u_product), zero otherwise.
    for (auto [s, init] : llvm::zip_equal(stateSpecs, f.layout->stateInit)) {
      NDArray a = NDArray::zeros(s.shape, s.dtype);
      if (init != 0)
        for (int64_t i = 0, n = a.numel(); i < n; ++i)
          a.set(i, init);
      m.values.state.push_back(std::move(a));
    }
    m.values.iterations = NDArray::scalar(0, DType::I64);
    m.values.lr = NDArray::scalar(
        m.options.learningRate,
        specOf(f.train.getArgument(f.layout->learningRateArg()).getType())
            .dtype);
  }
  m.backend = m.options.mode == ExecMode::Compiled
                  ? createCompiledBackend(f, m.options)
                  : createInterpretedBackend(f);
}

Executable::Executable(Executable &&) noexcept = default;
Executable &Executable::operator=(Executable &&) noexcept = default;
Executable::~Executable() = default;

ExecMode Executable::mode() const { return impl_->options.mode; }
bool Executable::hasTrainStep() const { return bool(impl_->functions.train); }
const std::vector<std::string> &Executable::metricNames() const {
  return impl_->metrics;
}
const std::vector<std::optional<MetricConfig>> &
Executable::statefulMetrics() const {
  return impl_->stateful;
}
const std::vector<std::string> &Executable::weightNames() const {
  return impl_->names;
}

int64_t Executable::batchSize() const {
  const StepFunctions &f = impl_->functions;
  return CompileCache::batchOf(f.train ? f.train : f.forward);
}

TensorSpec Executable::inputSpec() const {
  mlir::func::FuncOp train = impl_->functions.train;
  if (!train)
    throw Error("inputSpec: the executable has no @train_step");
  return specOf(train.getArgument(impl_->layout().firstInputArg()).getType());
}

TensorSpec Executable::targetSpec() const {
  mlir::func::FuncOp train = impl_->functions.train;
  if (!train)
    throw Error("targetSpec: the executable has no @train_step");
  return specOf(train.getArgument(impl_->layout().targetArg()).getType());
}

std::vector<TensorSpec> Executable::inputSpecs() const {
  mlir::func::FuncOp train = impl_->functions.train;
  if (!train)
    throw Error("inputSpecs: the executable has no @train_step");
  const TrainStepLayout &l = impl_->layout();
  std::vector<TensorSpec> specs;
  for (unsigned i = 0; i < l.numInputs; ++i)
    specs.push_back(specOf(train.getArgument(l.firstInputArg() + i).getType()));
  return specs;
}

std::vector<TensorSpec> Executable::targetSpecs() const {
  mlir::func::FuncOp train = impl_->functions.train;
  if (!train)
    throw Error("targetSpecs: the executable has no @train_step");
  const TrainStepLayout &l = impl_->layout();
  std::vector<TensorSpec> specs;
  for (unsigned i = 0; i < l.numTargets; ++i)
    specs.push_back(specOf(train.getArgument(l.targetArg() + i).getType()));
  return specs;
}

StepResult Executable::step(const NDArray &x, const NDArray &y) {
  return step(x, y, NDArray());
}

bool Executable::hasSampleWeight() const {
  return impl_->functions.train && impl_->layout().sampleWeight;
}

StepResult Executable::step(const NDArray &x, const NDArray &y,
                            const NDArray &w) {
  mlir::func::FuncOp train = impl_->functions.train;
  if (train && impl_->layout().numInputs != 1)
    throw Error("step: @train_step takes " +
                std::to_string(impl_->layout().numInputs) +
                " inputs; step(x, y) feeds one (pass one array per input)");
  if (train && impl_->layout().numTargets != 1)
    throw Error("step: @train_step takes " +
                std::to_string(impl_->layout().numTargets) +
                " targets; step(x, y) feeds one (pass one array per output)");
  return step(std::vector<NDArray>{x}, std::vector<NDArray>{y}, w);
}

StepResult Executable::step(const std::vector<NDArray> &inputs,
                            const std::vector<NDArray> &targets,
                            const NDArray &w) {
  Impl &m = *impl_;
  mlir::func::FuncOp train = m.functions.train;
  if (!train)
    throw Error("step: the executable has no @train_step");
  const TrainStepLayout &l = m.layout();
  if (inputs.size() != l.numInputs || targets.size() != l.numTargets)
    throw Error("step: @train_step takes " + std::to_string(l.numInputs) +
                " inputs and " + std::to_string(l.numTargets) +
                " targets, got " + std::to_string(inputs.size()) + " and " +
                std::to_string(targets.size()));
  auto nth = [](const char *what, unsigned i, unsigned n) {
    return std::string("step: the ") + what + " batch" +
           (n == 1 ? std::string() : " " + std::to_string(i));
  };
  for (unsigned i = 0; i < l.numInputs; ++i)
    checkMatches(inputs[i],
                 specOf(train.getArgument(l.firstInputArg() + i).getType()),
                 nth("input", i, l.numInputs));
  std::vector<NDArray> checkedTargets;
  for (unsigned i = 0; i < l.numTargets; ++i)
    checkedTargets.push_back(withDType(
        targets[i], specOf(train.getArgument(l.targetArg() + i).getType()),
        nth("target", i, l.numTargets)));
  NDArray weight;
  if (l.sampleWeight) {
    TensorSpec wSpec = specOf(train.getArgument(l.sampleWeightArg()).getType());
    if (w.defined()) {
      weight = withDType(w, wSpec, "step: the sample weights");
    } else {
      weight = NDArray::empty(wSpec.shape, wSpec.dtype);
      std::fill_n(weight.data<float>(), weight.numel(), 1.0f);
    }
  } else if (w.defined()) {
    throw Error("step: @train_step takes no sample weights; build it with "
                "TrainingConfig::sampleWeight");
  }

  StepResult result;
  result.metrics.resize(l.metrics.size());
  result.statistics.resize(l.metrics.size());
  m.backend->step(m.values, inputs, checkedTargets, weight, result);
  for (size_t i = 0; i < m.stateful.size(); ++i)
    if (m.stateful[i])
      result.metrics[i] = metricResult(*m.stateful[i], result.statistics[i]);
  ++m.steps;
  return result;
}

NDArray Executable::predict(const NDArray &x) {
  mlir::func::FuncOp forward = impl_->functions.forward;
  if (forward && forward.getNumResults() != 1)
    throw Error("predict: @forward returns " +
                std::to_string(forward.getNumResults()) +
                " results; predict(x) returns one (pass a list of inputs)");
  return predict(std::vector<NDArray>{x}).front();
}

std::vector<NDArray> Executable::predict(const std::vector<NDArray> &inputs) {
  Impl &m = *impl_;
  mlir::func::FuncOp forward = m.functions.forward;
  if (!forward)
    throw Error("predict: the executable has no @forward");
  std::vector<unsigned> inputArgs;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (kc::isInputArg(forward, i))
      inputArgs.push_back(i);
  // kc.input orders the inputs; the arguments may come in another order.
  std::sort(inputArgs.begin(), inputArgs.end(), [&](unsigned a, unsigned b) {
    return *kc::getInputIndex(forward, a) < *kc::getInputIndex(forward, b);
  });
  if (inputs.size() != inputArgs.size())
    throw Error("predict: @forward takes " + std::to_string(inputArgs.size()) +
                " inputs, got " + std::to_string(inputs.size()));
  std::vector<TensorSpec> inSpecs, outSpecs;
  for (unsigned a : inputArgs)
    inSpecs.push_back(specOf(forward.getArgument(a).getType()));
  for (mlir::Type t : forward.getResultTypes())
    outSpecs.push_back(specOf(t));
  int64_t batch = inSpecs[0].shape[0];
  int64_t n = inputs[0].rank() >= 1 ? inputs[0].dim(0) : 0;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const NDArray &x = inputs[k];
    Shape rowShape(inSpecs[k].shape.begin() + 1, inSpecs[k].shape.end());
    std::string which =
        inputs.size() == 1 ? std::string() : " input " + std::to_string(k);
    if (!x.defined() || x.rank() < 1 ||
        Shape(x.shape().begin() + 1, x.shape().end()) != rowShape ||
        x.dtype() != inSpecs[k].dtype)
      throw Error("predict: @forward takes" + which + " rows of " +
                  std::string(dtypeName(inSpecs[k].dtype)) + " " +
                  shapeToString(rowShape) + ", got " + describe(x));
    if (x.dim(0) != n)
      throw Error("predict: input " + std::to_string(k) + " has " +
                  std::to_string(x.dim(0)) + " rows, input 0 has " +
                  std::to_string(n));
  }

  // The results, and on the first call the padded batches and outputs.
  std::optional<int64_t> bytes = 0;
  for (const TensorSpec &s : outSpecs) {
    Shape resultShape = s.shape;
    resultShape[0] = n;
    if (bytes)
      bytes = addChecked(*bytes, tensorBytes(resultShape, s.dtype));
  }
  if (m.predictIn.empty())
    for (const std::vector<TensorSpec> *specs : {&inSpecs, &outSpecs})
      for (const TensorSpec &s : *specs)
        if (bytes)
          bytes = addChecked(*bytes, tensorBytes(s.shape, s.dtype));
  if (!bytes)
    throw Error("predict: the batches and the result need more than 2^63-1 "
                "bytes");
  requireMemory(*bytes, "predict: the batch of " + std::to_string(batch) +
                            " rows and the result of " + std::to_string(n));
  std::vector<NDArray> results;
  for (const TensorSpec &s : outSpecs) {
    Shape resultShape = s.shape;
    resultShape[0] = n;
    results.push_back(NDArray::empty(resultShape, s.dtype));
  }
  if (m.predictIn.empty()) {
    for (const TensorSpec &s : inSpecs)
      m.predictIn.push_back(NDArray::empty(s.shape, s.dtype));
    for (const TensorSpec &s : outSpecs)
      m.predictOut.push_back(NDArray::empty(s.shape, s.dtype));
  }
  std::vector<NDArray> args(forward.getNumArguments());
  unsigned p = 0;
  for (unsigned i = 0; i < args.size(); ++i) {
    auto in = std::find(inputArgs.begin(), inputArgs.end(), i);
    if (in != inputArgs.end())
      args[i] = m.predictIn[in - inputArgs.begin()];
    else if (kc::isStepArg(forward, i))
      args[i] = m.values.iterations.defined() ? m.values.iterations
                                              : NDArray::scalar(0, DType::I64);
    else
      args[i] = m.values.params[p++];
  }
  auto rowBytes = [&](const TensorSpec &s) {
    return static_cast<size_t>(numElements(s.shape) / batch) *
           dtypeSize(s.dtype);
  };
  for (int64_t start = 0; start < n; start += batch) {
    int64_t rows = std::min(batch, n - start);
    for (size_t k = 0; k < inputs.size(); ++k) {
      size_t inRow = rowBytes(inSpecs[k]);
      auto *dst = static_cast<char *>(m.predictIn[k].rawData());
      std::memcpy(
          dst, static_cast<const char *>(inputs[k].rawData()) + start * inRow,
          rows * inRow);
      if (rows < batch)
        std::memset(dst + rows * inRow, 0, (batch - rows) * inRow);
    }
    m.backend->forward(args, m.predictOut);
    for (size_t k = 0; k < outSpecs.size(); ++k) {
      size_t outRow = rowBytes(outSpecs[k]);
      std::memcpy(static_cast<char *>(results[k].rawData()) + start * outRow,
                  m.predictOut[k].rawData(), rows * outRow);
    }
  }
  return results;
}

std::vector<NDArray> Executable::getWeights() const {
  std::vector<NDArray> out;
  for (const NDArray &p : impl_->values.params)
    out.push_back(p.clone());
  return out;
}

NDArray Executable::getWeight(const std::string &name) const {
  return impl_->values.params[impl_->paramIndex(name)].clone();
}

void Executable::setWeight(const std::string &name, const NDArray &value) {
  Impl &m = *impl_;
  unsigned i = m.paramIndex(name);
  checkMatches(value, m.paramSpecs[i], "setWeight: '" + name + "'");
  // Into the bound buffer: a compiled step keeps pointers to it.
  std::memcpy(m.values.params[i].rawData(), value.rawData(), value.bytes());
}

void Executable::setWeights(const std::vector<NDArray> &values) {
  Impl &m = *impl_;
  if (values.size() != m.names.size())
    throw Error("setWeights: expected " + std::to_string(m.names.size()) +
                " arrays, got " + std::to_string(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    checkMatches(values[i], m.paramSpecs[i],
                 "setWeights: '" + m.names[i] + "'");
  for (size_t i = 0; i < values.size(); ++i)
    setWeight(m.names[i], values[i]);
}

std::vector<NDArray> Executable::getOptimizerState() const {
  std::vector<NDArray> out;
  for (const NDArray &s : impl_->values.state)
    out.push_back(s.clone());
  return out;
}

void Executable::setOptimizerState(const std::vector<NDArray> &values) {
  std::vector<NDArray> &slots = impl_->values.state;
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
  const NDArray &it = impl_->values.iterations;
  return it.defined() ? static_cast<int64_t>(it.at(0)) : 0;
}

void Executable::setIterations(int64_t iterations) {
  NDArray &it = impl_->values.iterations;
  if (!it.defined())
    throw Error("setIterations: the executable has no @train_step");
  it.set(0, static_cast<double>(iterations));
}

void Executable::setLearningRate(double lr) {
  // Keras refuses too: the rate is the schedule's, computed in the step.
  // Setting the value it already reports (the schedule's initial rate) is
  // allowed, so generic callers may re-apply it.
  const std::optional<TrainStepLayout> &layout = impl_->functions.layout;
  if (layout && !layout->schedule.empty() && lr != impl_->options.learningRate)
    throw Error("setLearningRate: the learning rate follows the schedule " +
                layout->schedule +
                " inside the step and cannot be set (as in Keras)");
  impl_->options.learningRate = lr;
  if (impl_->values.lr.defined())
    impl_->values.lr.set(0, lr);
}

double Executable::learningRate() const { return impl_->options.learningRate; }

ExecStats Executable::stats() const {
  const Impl &m = *impl_;
  ExecStats s;
  s.mode = m.options.mode;
  s.steps = m.steps;
  m.backend->addStats(s, m.values);
  return s;
}

std::string Executable::moduleText() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  impl_->module->print(os);
  return text;
}
