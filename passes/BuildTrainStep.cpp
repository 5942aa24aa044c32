//===- BuildTrainStep.cpp - @forward -> @train_step -----------------------===//
//
// Builds the whole training step as one function: the cloned forward body,
// the loss and metrics (Losses.h), the reverse sweep (kcc::buildGradients)
// and the optimizer update (Optimizers.h). Everything downstream (fusion,
// memory planning, codegen, the interpreter) then optimizes or runs a single
// graph, which is where a compiler beats per-op dispatch.
//
//===----------------------------------------------------------------------===//

#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"
#include "passes/Autodiff.h"
#include "passes/GradientBuckets.h"
#include "passes/KcEmitter.h"
#include "passes/Losses.h"
#include "passes/Metrics.h"
#include "passes/Optimizers.h"
#include "passes/Passes.h"
#include "passes/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"
#include <map>

#define DEBUG_TYPE "kc-build-train-step"

using namespace mlir;

namespace kcc {
#define GEN_PASS_DEF_KCBUILDTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace kcc

namespace kcc {
namespace {

/// How one argument of @forward is fed in @train_step.
struct ForwardArgs {
  llvm::SmallVector<unsigned> params; ///< in signature order
  llvm::SmallVector<unsigned> inputs; ///< ordered by kc.input
  std::optional<unsigned> step;       ///< the dropout counter, if any
};

bool isTrainable(func::FuncOp f, unsigned i) {
  return kc::isTrainableArg(f, i);
}

std::string paramName(func::FuncOp f, unsigned i) {
  if (std::optional<llvm::StringRef> name = kc::getArgName(f, i))
    return name->str();
  return "param" + std::to_string(i);
}

FailureOr<ForwardArgs> classifyArgs(func::FuncOp forward) {
  ForwardArgs args;
  llvm::SmallVector<std::pair<int64_t, unsigned>> inputs;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    if (std::optional<int64_t> input = kc::getInputIndex(forward, i))
      inputs.push_back({*input, i});
    else if (kc::isStepArg(forward, i))
      args.step = i;
    else
      args.params.push_back(i);
  }
  if (inputs.empty())
    return forward.emitOpError("has no argument marked {kc.input}");
  llvm::sort(inputs);
  for (auto [index, arg] : inputs)
    args.inputs.push_back(arg);
  return args;
}

/// Builds @train_step from @forward and a validated TrainingConfig, one
/// named step at a time. Argument and result positions come from the
/// TrainStepLayout computed first, never from index arithmetic.
class TrainStepBuilder {
public:
  TrainStepBuilder(func::FuncOp forward, const TrainingConfig &config)
      : forward_(forward), config_(config), ctx_(forward.getContext()),
        b_(forward) {}

  /// Builds @train_step after @forward; on failure, emits the error and
  /// leaves the module as it was.
  LogicalResult build();

  unsigned numTrainable() const { return trainable_.size(); }
  unsigned numFrozen() const { return fwdArgs_.params.size() - numTrainable(); }

private:
  LogicalResult analyzeForward();
  /// The function of custom object `name` for output `k`, checked against
  /// the prediction `pred`; null after an error.
  func::FuncOp customFunction(llvm::StringRef name, unsigned k,
                              RankedTensorType pred, llvm::StringRef what);
  LogicalResult checkMetrics(unsigned k, const LossConfig &loss,
                             llvm::ArrayRef<std::string> metrics,
                             RankedTensorType pred);
  /// The custom function's values on (target, pred), its body cloned here.
  Value inlineCustom(func::FuncOp fn, Value target, Value pred);
  /// Output `k`'s loss: built in, or its custom function reduced as Keras
  /// reduces a loss function's values.
  Value outputLoss(unsigned k, const LossConfig &loss, Value pred,
                   llvm::StringRef name);
  /// The loss built-in metrics of output `k` resolve against: its own, or
  /// for a custom loss the built-in one of the same target form.
  LossKind metricLoss(unsigned k, const LossConfig &loss) const {
    if (loss.custom.empty())
      return loss.kind;
    return isa<IntegerType>(targetTypes_[k].getElementType())
               ? LossKind::SparseCategoricalCrossentropy
               : LossKind::CategoricalCrossentropy;
  }
  /// Output `k`'s metric `name`.
  Value outputMetric(unsigned k, const LossConfig &loss,
                     const std::string &name, Value pred, llvm::StringRef log);
  void createFunction();
  llvm::SmallVector<Value> cloneForward();
  LogicalResult buildLossAndGradients(ValueRange preds);
  void buildMetrics(ValueRange preds);
  void buildOptimizerUpdate();
  void setArgAndResultNames();
  void setLayoutAttr();
  void dropForwardUpdates();

  DictionaryAttr named(llvm::StringRef name) {
    return kc::getNameDict(ctx_, name);
  }
  Location nameLoc(llvm::StringRef name) {
    return NameLoc::get(StringAttr::get(ctx_, name));
  }
  Value arg(unsigned i) { return step_.getArgument(i); }
  /// The target of output `k`.
  Value target(unsigned k) { return arg(layout_.targetArg() + k); }
  /// %sample_weight, or null when the step takes none.
  Value sampleWeight() {
    return layout_.sampleWeight ? arg(layout_.sampleWeightArg()) : Value();
  }
  llvm::StringRef optName() const {
    return optimizerName(config_.optimizer.kind);
  }
  /// "adam/momentum/dense/kernel": optimizer state `slot` of forward param
  /// `i`.
  std::string slotName(unsigned i, llvm::StringRef slot) const {
    return (optName() + "/" + slot + "/" + paramName(forward_, i)).str();
  }

  func::FuncOp forward_;
  const TrainingConfig &config_;
  MLIRContext *ctx_;
  OpBuilder b_;

  // From analyzeForward().
  ForwardArgs fwdArgs_;
  /// The first prediction's type (the batch and the float type), and one
  /// target type per output.
  RankedTensorType predType_;
  llvm::SmallVector<RankedTensorType> targetTypes_;
  /// Positions in fwdArgs_.params of the trainable params.
  llvm::SmallVector<unsigned> trainable_;
  /// (position in fwdArgs_.params, @forward result) of each param update.
  llvm::SmallVector<std::pair<unsigned, unsigned>> updated_;
  /// The @forward result marked kc.added_loss (the regularizers), if any.
  std::optional<unsigned> addedLossResult_;
  /// (@forward result, prediction) of each kc.output_mask result.
  llvm::SmallVector<std::pair<unsigned, unsigned>> maskResults_;
  /// Custom loss and metric functions by (output, name), inlined into the
  /// step and erased from the module once it is built.
  std::map<std::pair<unsigned, std::string>, func::FuncOp> custom_;
  llvm::SmallVector<SlotSpec> slots_;
  /// Optimizer-wide state after the per-param slots (Nadam's u_product).
  llvm::SmallVector<SlotSpec> globals_;
  TrainStepLayout layout_;

  // Built.
  func::FuncOp step_;
  Value loss_;
  /// The cloned new value of each updated param, by position.
  llvm::DenseMap<unsigned, Value> updates_;
  /// The cloned kc.added_loss result, or null.
  Value addedLoss_;
  /// The cloned Keras mask of each masked prediction.
  llvm::DenseMap<unsigned, Value> masks_;
  llvm::SmallVector<Value> grads_;   ///< one per trainable_ entry
  llvm::SmallVector<Value> results_; ///< in layout order
};

LogicalResult TrainStepBuilder::build() {
  if (failed(analyzeForward()))
    return failure();
  createFunction();
  llvm::SmallVector<Value> preds = cloneForward();
  if (failed(buildLossAndGradients(preds))) {
    step_.erase();
    return forward_.emitOpError("could not be differentiated");
  }
  buildMetrics(preds);
  buildOptimizerUpdate();
  setArgAndResultNames();
  setLayoutAttr();
  dropForwardUpdates();
  for (auto &[key, fn] : custom_)
    fn.erase();
  LLVM_DEBUG(llvm::dbgs() << "built @train_step: " << layout_.numParams
                          << " params (" << numTrainable() << " trainable), "
                          << layout_.numOptimizerState << " state tensors\n");
  return success();
}

/// Classifies @forward's arguments, checks its prediction against the loss
/// and fixes the layout.
LogicalResult TrainStepBuilder::analyzeForward() {
  FailureOr<ForwardArgs> args = classifyArgs(forward_);
  if (failed(args))
    return failure();
  fwdArgs_ = std::move(*args);
  // Results marked kc.updates are new values of non-trainable params,
  // returned in their place after the predictions (one per output).
  unsigned numResults = forward_.getNumResults(), numUpdates = 0;
  for (unsigned r = 0; r < numResults; ++r)
    if (kc::getUpdatedArg(forward_, r))
      ++numUpdates;
  // A kc.added_loss result (Keras's model.losses) comes last.
  for (unsigned r = 0; r < numResults; ++r)
    if (kc::isAddedLoss(forward_, r)) {
      auto type =
          dyn_cast<RankedTensorType>(forward_.getFunctionType().getResult(r));
      if (r + 1 != numResults || addedLossResult_ || !type ||
          type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
        return forward_.emitOpError("result ")
               << r
               << " is marked kc.added_loss but is not a single float "
                  "scalar after every other result";
      addedLossResult_ = r;
    }
  for (unsigned r = 0; r < numResults; ++r)
    if (std::optional<unsigned> k = kc::getMaskedOutput(forward_, r))
      maskResults_.push_back({r, *k});
  unsigned numPreds = numResults - numUpdates - maskResults_.size() -
                      (addedLossResult_ ? 1 : 0);
  for (auto [r, k] : maskResults_) {
    auto mask =
        dyn_cast<RankedTensorType>(forward_.getFunctionType().getResult(r));
    auto pred = k < numPreds ? dyn_cast<RankedTensorType>(
                                   forward_.getFunctionType().getResult(k))
                             : RankedTensorType();
    if (r < numPreds || !pred || !mask || pred.getRank() < 2 ||
        mask.getShape() != pred.getShape().drop_back() ||
        !isa<FloatType>(mask.getElementType()))
      return forward_.emitOpError("result ")
             << r << " is marked kc.output_mask of result " << k
             << " but is not a float mask of that prediction's shape without "
                "its last axis after the predictions (Keras applies a mask "
                "to the loss values of a prediction of rank >= 3, one per "
                "step)";
    const LossConfig &loss =
        config_.outputs.empty() ? config_.loss : config_.outputs[k].loss;
    if (!loss.custom.empty())
      return forward_.emitOpError("result ")
             << k << " carries a Keras mask, which custom loss '" << loss.custom
             << "' cannot take";
    for (const std::string &name : config_.outputs.empty()
                                       ? config_.metrics
                                       : config_.outputs[k].metrics) {
      bool ok = false;
      if (!config_.isCustomObject(name)) {
        llvm::Expected<MetricConfig> m =
            MetricConfig::parse(name, metricLoss(k, loss));
        if (!m) {
          llvm::consumeError(m.takeError());
          continue; // checkMetrics reports it
        }
        ok = !m->stateful() &&
             (metricAsLoss(m->kind) ||
              m->kind == MetricKind::SparseCategoricalAccuracy ||
              m->kind == MetricKind::CategoricalAccuracy);
      }
      if (!ok)
        return forward_.emitOpError("metric '")
               << name << "' of result " << k
               << " cannot take the prediction's Keras mask (masked "
                  "predictions support the accuracies and the loss metrics)";
    }
  }
  for (unsigned r = 0; r < numResults; ++r)
    if (std::optional<unsigned> arg = kc::getUpdatedArg(forward_, r)) {
      const unsigned *k = llvm::find(fwdArgs_.params, *arg);
      if (r < numPreds || k == fwdArgs_.params.end() ||
          isTrainable(forward_, *arg))
        return forward_.emitOpError("result ")
               << r << " updates argument " << *arg
               << ", which is not a non-trainable parameter after the "
                  "predictions";
      updated_.push_back(
          {static_cast<unsigned>(k - fwdArgs_.params.begin()), r});
    }
  const std::vector<OutputTraining> &outputs = config_.outputs;
  unsigned numOutputs = outputs.empty() ? 1 : outputs.size();
  if (numPreds != numOutputs) {
    if (outputs.empty())
      return forward_.emitOpError("expects one result (the prediction), got ")
             << numPreds
             << " (train several outputs with one loss each: the `outputs` "
                "option)";
    return forward_.emitOpError("has ")
           << numPreds << " predictions but " << numOutputs
           << " outputs are configured";
  }
  for (unsigned k = 0; k < numOutputs; ++k) {
    const LossConfig &lossConfig =
        outputs.empty() ? config_.loss : outputs[k].loss;
    LossKind loss = lossConfig.kind;
    Type result = forward_.getFunctionType().getResult(k);
    auto pred = dyn_cast<RankedTensorType>(result);
    if (!lossConfig.custom.empty() && pred) {
      func::FuncOp fn = customFunction(lossConfig.custom, k, pred, "loss");
      if (!fn)
        return failure();
      auto values = cast<RankedTensorType>(fn.getResultTypes()[0]);
      if (values.getRank() == 0 && config_.sampleWeight)
        return fn.emitOpError("custom loss '")
               << lossConfig.custom
               << "' returns one scalar, which sample weights cannot weigh: "
                  "return one value per example ([batch, ...])";
    }
    RankedTensorType target =
        lossConfig.custom.empty()
            ? targetType(loss, pred)
            : (pred ? cast<RankedTensorType>(
                          custom_[{k, lossConfig.custom}].getArgumentTypes()[0])
                    : RankedTensorType());
    if (!target) {
      std::string why = pred && lossConfig.custom.empty()
                            ? checkLossShape(lossConfig, pred)
                            : std::string();
      return forward_.emitOpError("result ")
             << k << " " << result << " cannot take the " << lossConfig.name()
             << " loss ("
             << (why.empty() ? "expects a float tensor of rank >= 1" : why)
             << ")";
    }
    if (lossConfig.custom.empty())
      if (std::string why =
              checkLossShape(lossConfig, pred, config_.sampleWeight);
          !why.empty())
        return forward_.emitOpError("result ")
               << k << " " << result << " cannot take the loss "
               << lossConfig.str() << ": " << why;
    if (k == 0)
      predType_ = pred;
    else if (pred.getElementType() != predType_.getElementType() ||
             pred.getDimSize(0) != predType_.getDimSize(0))
      return forward_.emitOpError("result ")
             << k << " " << result
             << " must have the batch and float type of result 0 " << predType_;
    targetTypes_.push_back(target);
    if (failed(checkMetrics(
            k, lossConfig,
            outputs.empty() ? config_.metrics : outputs[k].metrics, pred)))
      return failure();
  }

  for (auto [k, i] : llvm::enumerate(fwdArgs_.params))
    if (isTrainable(forward_, i))
      trainable_.push_back(k);
  slots_ = slotSpecs(config_.optimizer);
  globals_ = globalSlotSpecs(config_.optimizer);
  layout_.numParams = fwdArgs_.params.size();
  layout_.numOptimizerState =
      trainable_.size() * slots_.size() + globals_.size();
  layout_.numInputs = fwdArgs_.inputs.size();
  layout_.numTargets = numOutputs;
  layout_.metrics = config_.resultNames();
  layout_.statistics.assign(layout_.metrics.size(), "");
  {
    // A stateful metric's result is its statistics: the layout says which
    // metric (MetricConfig::str()) sums and finalizes them.
    auto mark = [&](size_t at, const std::string &name, unsigned k,
                    const LossConfig &loss) {
      if (config_.isCustomObject(name))
        return;
      llvm::Expected<MetricConfig> m =
          MetricConfig::parse(name, metricLoss(k, loss));
      if (!m) {
        llvm::consumeError(m.takeError());
        return;
      }
      if (m->stateful())
        layout_.statistics[at] = m->str();
    };
    size_t at = config_.outputs.empty() ? 0 : config_.outputs.size();
    if (config_.outputs.empty())
      for (const std::string &name : config_.metrics)
        mark(at++, name, 0, config_.loss);
    for (auto [k, out] : llvm::enumerate(config_.outputs))
      for (const std::string &name : out.metrics)
        mark(at++, name, k, out.loss);
  }
  layout_.loss = config_.loss.name();
  layout_.optimizer = optName().str();
  layout_.sampleWeight = config_.sampleWeight;
  if (const std::optional<LearningRateSchedule> &s = config_.optimizer.schedule)
    layout_.schedule = s->str();
  for (unsigned k = 0, e = trainable_.size(); k < e; ++k)
    for (const SlotSpec &slot : slots_)
      layout_.stateInit.push_back(slot.init);
  for (const SlotSpec &slot : globals_)
    layout_.stateInit.push_back(slot.init);
  return success();
}

func::FuncOp TrainStepBuilder::customFunction(llvm::StringRef name, unsigned k,
                                              RankedTensorType pred,
                                              llvm::StringRef what) {
  std::string symbol = customFunctionSymbol(name, k);
  auto key = std::make_pair(k, name.str());
  if (auto known = custom_.find(key); known != custom_.end())
    return known->second;
  auto module = forward_->getParentOfType<ModuleOp>();
  auto fn = module.lookupSymbol<func::FuncOp>(symbol);
  if (!fn || fn.isExternal()) {
    forward_.emitOpError("custom ")
        << what << " '" << name << "' of result " << k << " has no function @\""
        << symbol
        << "\" in the module (the frontend traces it from "
           "kcc::CompileOptions::customObjects)";
    return {};
  }
  FunctionType type = fn.getFunctionType();
  auto target = type.getNumInputs() == 2
                    ? dyn_cast<RankedTensorType>(type.getInput(0))
                    : RankedTensorType();
  auto values = type.getNumResults() == 1
                    ? dyn_cast<RankedTensorType>(type.getResult(0))
                    : RankedTensorType();
  int64_t batch = pred.getDimSize(0);
  if (!target || type.getInput(1) != pred || target.getRank() < 1 ||
      target.getDimSize(0) != batch || !values ||
      !isa<FloatType>(values.getElementType()) ||
      (values.getRank() > 0 && values.getDimSize(0) != batch)) {
    fn.emitOpError("custom ")
        << what << " '" << name << "' must be (y_true, y_pred: " << pred
        << ") -> float values [" << batch
        << ", ...] or a float scalar, y_true with the batch first; got "
        << type;
    return {};
  }
  custom_[key] = fn;
  return fn;
}

/// Custom metrics see the output's target; with a custom loss, built-in
/// metrics must take the target its function takes.
LogicalResult
TrainStepBuilder::checkMetrics(unsigned k, const LossConfig &loss,
                               llvm::ArrayRef<std::string> metrics,
                               RankedTensorType pred) {
  for (const std::string &name : metrics) {
    if (config_.isCustomObject(name)) {
      func::FuncOp fn = customFunction(name, k, pred, "metric");
      if (!fn)
        return failure();
      if (fn.getArgumentTypes()[0] != targetTypes_[k])
        return fn.emitOpError("custom metric '")
               << name << "' takes y_true " << fn.getArgumentTypes()[0]
               << " but output " << k << "'s target is " << targetTypes_[k];
      continue;
    }
    if (loss.custom.empty()) {
      llvm::Expected<MetricConfig> m =
          MetricConfig::parse(name, metricLoss(k, loss));
      if (!m)
        return forward_.emitOpError("metric '")
               << name << "': " << llvm::toString(m.takeError());
      if (std::string why = checkMetricShape(*m, pred); !why.empty())
        return forward_.emitOpError("metric '")
               << m->logName() << "' on " << pred << ": " << why;
      continue;
    }
    llvm::Expected<MetricKind> kind = parseMetric(name, metricLoss(k, loss));
    if (!kind)
      return forward_.emitOpError("output ")
             << k << " with custom loss '" << loss.custom
             << "': " << llvm::toString(kind.takeError());
    RankedTensorType want = targetType(
        takesClassIndices(*kind) ? LossKind::SparseCategoricalCrossentropy
                                 : LossKind::MeanSquaredError,
        pred);
    if (want != targetTypes_[k])
      return forward_.emitOpError("metric '")
             << name << "' takes targets " << want << " but custom loss '"
             << loss.custom << "' takes " << targetTypes_[k];
  }
  return success();
}

Value TrainStepBuilder::inlineCustom(func::FuncOp fn, Value target,
                                     Value pred) {
  IRMapping map;
  Block &body = fn.getBody().front();
  map.map(body.getArgument(0), target);
  map.map(body.getArgument(1), pred);
  for (Operation &op : body.without_terminator())
    b_.clone(op, map);
  return map.lookupOrDefault(body.getTerminator()->getOperand(0));
}

Value TrainStepBuilder::outputLoss(unsigned k, const LossConfig &loss,
                                   Value pred, llvm::StringRef name) {
  if (loss.custom.empty())
    return buildLoss(b_, nameLoc(name), loss, pred, target(k), sampleWeight(),
                     masks_.lookup(k));
  Value values = inlineCustom(custom_[{k, loss.custom}], target(k), pred);
  return reduceLossValues(b_, nameLoc(name), values, sampleWeight(),
                          predType_.getElementType());
}

Value TrainStepBuilder::outputMetric(unsigned k, const LossConfig &loss,
                                     const std::string &name, Value pred,
                                     llvm::StringRef log) {
  if (!config_.isCustomObject(name)) {
    MetricConfig m =
        llvm::cantFail(MetricConfig::parse(name, metricLoss(k, loss)));
    if (m.stateful())
      return buildMetricStatistics(b_, nameLoc(log), m, pred, target(k));
    return buildMetric(b_, nameLoc(log), m, pred, target(k), masks_.lookup(k));
  }
  Value values = inlineCustom(custom_[{k, name}], target(k), pred);
  // Unweighted, as compile()'s metrics are.
  return reduceLossValues(b_, nameLoc(log), values, Value(),
                          predType_.getElementType());
}

/// Creates @train_step with the layout's arguments and an empty body:
/// params, optimizer state (param-major, then the global slots),
/// iterations, learning rate, inputs, targets.
void TrainStepBuilder::createFunction() {
  llvm::SmallVector<Type> argTypes;
  auto typeOf = [&](unsigned i) { return forward_.getArgument(i).getType(); };
  for (unsigned i : fwdArgs_.params)
    argTypes.push_back(typeOf(i));
  for (unsigned k : trainable_)
    argTypes.append(slots_.size(), typeOf(fwdArgs_.params[k]));
  argTypes.append(globals_.size(),
                  RankedTensorType::get({}, predType_.getElementType()));
  argTypes.push_back(RankedTensorType::get({}, b_.getI64Type()));
  argTypes.push_back(RankedTensorType::get({}, b_.getF32Type()));
  for (unsigned i : fwdArgs_.inputs)
    argTypes.push_back(typeOf(i));
  argTypes.append(targetTypes_.begin(), targetTypes_.end());
  if (layout_.sampleWeight)
    argTypes.push_back(RankedTensorType::get({predType_.getDimSize(0)},
                                             predType_.getElementType()));
  assert(argTypes.size() == layout_.numArgs() && "layout mismatch");

  b_.setInsertionPointAfter(forward_);
  step_ = b_.create<func::FuncOp>(forward_.getLoc(), "train_step",
                                  b_.getFunctionType(argTypes, {}));
  b_.setInsertionPointToStart(step_.addEntryBlock());
}

/// Clones @forward's body into @train_step; returns the predictions. The
/// dropout counter, if any, is fed by `iterations`.
llvm::SmallVector<Value> TrainStepBuilder::cloneForward() {
  IRMapping map;
  for (auto [k, i] : llvm::enumerate(fwdArgs_.params))
    map.map(forward_.getArgument(i), arg(layout_.firstParamArg() + k));
  for (auto [k, i] : llvm::enumerate(fwdArgs_.inputs))
    map.map(forward_.getArgument(i), arg(layout_.firstInputArg() + k));
  if (fwdArgs_.step) {
    BlockArgument stepArg = forward_.getArgument(*fwdArgs_.step);
    Value counter = arg(layout_.iterationsArg());
    if (stepArg.getType() != counter.getType())
      counter =
          b_.create<kc::CastOp>(stepArg.getLoc(), stepArg.getType(), counter);
    map.map(stepArg, counter);
  }
  Block &body = forward_.getBody().front();
  for (Operation &op : body.without_terminator())
    b_.clone(op, map);
  Operation *ret = body.getTerminator();
  for (auto [k, r] : updated_)
    updates_[k] = map.lookupOrDefault(ret->getOperand(r));
  if (addedLossResult_)
    addedLoss_ = map.lookupOrDefault(ret->getOperand(*addedLossResult_));
  for (auto [r, k] : maskResults_)
    masks_[k] = map.lookupOrDefault(ret->getOperand(r));
  llvm::SmallVector<Value> preds;
  for (unsigned r = 0, e = ret->getNumOperands() - updated_.size() -
                           maskResults_.size() - (addedLossResult_ ? 1 : 0);
       r < e; ++r)
    preds.push_back(map.lookupOrDefault(ret->getOperand(r)));
  return preds;
}

/// The loss and its gradients with respect to the trainable params. With
/// several outputs, Keras's total: each output's loss (the same sample
/// weights for all) times its loss weight, summed; the output losses
/// follow the total among the results.
LogicalResult TrainStepBuilder::buildLossAndGradients(ValueRange preds) {
  if (config_.outputs.empty()) {
    loss_ = outputLoss(0, config_.loss, preds[0], "loss");
    results_.push_back(loss_);
  } else {
    llvm::SmallVector<Value> outputLosses;
    KcEmitter e(b_, nameLoc("loss"));
    for (auto [k, out] : llvm::enumerate(config_.outputs)) {
      Value l = outputLoss(k, out.loss, preds[k], out.name + "_loss");
      outputLosses.push_back(l);
      Value weighted = out.lossWeight == 1.0 ? l : e.mul(l, out.lossWeight);
      loss_ = loss_ ? e.add(loss_, weighted) : weighted;
    }
    results_.push_back(loss_);
    results_.append(outputLosses);
  }
  // Keras 3's compute_loss: the compiled loss plus sum(model.losses); the
  // logged loss is the total.
  if (addedLoss_) {
    KcEmitter e(b_, nameLoc("regularization"));
    if (addedLoss_.getType() != loss_.getType())
      addedLoss_ = e.cast(addedLoss_, getElementTypeOrSelf(loss_.getType()));
    loss_ = e.add(loss_, addedLoss_);
    results_[0] = loss_;
  }
  if (trainable_.empty())
    return success();
  llvm::SmallVector<Value> wrt;
  for (unsigned k : trainable_)
    wrt.push_back(arg(layout_.firstParamArg() + k));
  FailureOr<llvm::SmallVector<Value>> grads = buildGradients(b_, loss_, wrt);
  if (failed(grads))
    return failure();
  grads_ = std::move(*grads);
  return success();
}

/// The metrics, built after the gradients so the reverse sweep never sees
/// them. Unweighted, as Keras 3's compile() metrics are.
void TrainStepBuilder::buildMetrics(ValueRange preds) {
  // TrainingConfig::validate() resolved every metric already.
  if (config_.outputs.empty()) {
    assert(results_.size() == layout_.firstMetricResult());
    for (const std::string &name : config_.metrics)
      results_.push_back(
          outputMetric(0, config_.loss, name, preds[0], metricLogName(name)));
    return;
  }
  for (auto [k, out] : llvm::enumerate(config_.outputs))
    for (const std::string &name : out.metrics)
      results_.push_back(
          outputMetric(k, out.loss, name, preds[k],
                       out.name + "_" + metricLogName(name).str()));
  assert(results_.size() == layout_.firstParamResult());
}

/// Clipped gradients, new params (frozen ones passed through or, when the
/// forward pass updates them, as it computed them), new
/// optimizer state and iterations + 1, then the return.
void TrainStepBuilder::buildOptimizerUpdate() {
  Location optLoc = nameLoc(optName());
  Value iterations = arg(layout_.iterationsArg());
  unsigned firstGlobal =
      layout_.firstStateArg() + trainable_.size() * slots_.size();
  StepScalars scalars = buildStepScalars(
      b_, optLoc, config_.optimizer, iterations, arg(layout_.learningRateArg()),
      predType_.getElementType(),
      step_.getArguments().slice(firstGlobal, globals_.size()));
  // Data-parallel: the mean over the ranks, before clipping, as Keras's
  // distribution strategies aggregate before apply_gradients.
  if (config_.dataParallel)
    reduceGradientsInBuckets(b_, nameLoc("all_reduce"), grads_,
                             config_.bucketBytes);
  llvm::SmallVector<Value> grads =
      buildClippedGradients(b_, optLoc, config_.optimizer, grads_);
  assert(results_.size() == layout_.firstParamResult());
  llvm::SmallVector<Value> newState;
  // trainable_ is increasing: walk it alongside the params.
  unsigned t = 0;
  for (unsigned k = 0; k < layout_.numParams; ++k) {
    Value param = arg(layout_.firstParamArg() + k);
    if (t == trainable_.size() || trainable_[t] != k) {
      Value update = updates_.lookup(k);
      // Data-parallel: the ranks' mean of what each computed from its own
      // batch (BatchNormalization's moving statistics), so every rank keeps
      // the same state, as tf.keras's MirroredStrategy aggregates them.
      if (update && config_.dataParallel)
        update =
            b_.create<kc::AllReduceOp>(nameLoc("all_reduce"), update.getType(),
                                       update, b_.getStringAttr("mean"));
      results_.push_back(update ? update : param);
      continue;
    }
    ValueRange paramSlots = step_.getArguments().slice(
        layout_.firstStateArg() + t * slots_.size(), slots_.size());
    Location loc = nameLoc(
        (optName() + "/" + paramName(forward_, fwdArgs_.params[k])).str());
    ParamUpdate u = buildUpdate(b_, loc, config_.optimizer, scalars, param,
                                grads[t], paramSlots);
    results_.push_back(u.param);
    newState.append(u.slots.begin(), u.slots.end());
    ++t;
  }
  assert(results_.size() == layout_.firstStateResult());
  results_.append(newState);
  results_.append(scalars.globalState);
  // iterations + 1: kc has float arithmetic only, and f64 holds every
  // integer below 2^53 exactly.
  KcEmitter e(b_, optLoc);
  results_.push_back(
      e.cast(e.add(e.cast(iterations, b_.getF64Type()), 1.0), b_.getI64Type()));
  assert(results_.size() == layout_.iterationsResult() + 1);

  b_.create<func::ReturnOp>(forward_.getLoc(), results_);
  step_.setType(b_.getFunctionType(step_.getArgumentTypes(),
                                   ValueRange(results_).getTypes()));
}

/// `kc.name` on every argument and result (params keep @forward's argument
/// attributes), `kc.target` on the target. Each list is built whole and set
/// once: setting one entry rebuilds (and uniques) the entire ArrayAttr, which
/// for a deep model is quadratic in time and in the context's memory.
void TrainStepBuilder::setArgAndResultNames() {
  llvm::SmallVector<DictionaryAttr> argAttrs(step_.getNumArguments());
  llvm::SmallVector<DictionaryAttr> resultAttrs(step_.getNumResults());
  for (auto [k, i] : llvm::enumerate(fwdArgs_.params)) {
    DictionaryAttr attrs = forward_.getArgAttrDict(i);
    argAttrs[layout_.firstParamArg() + k] =
        attrs ? attrs : named(paramName(forward_, i));
    resultAttrs[layout_.firstParamResult() + k] = named(paramName(forward_, i));
  }
  unsigned state = 0;
  for (unsigned k : trainable_)
    for (const SlotSpec &slot : slots_) {
      DictionaryAttr name = named(slotName(fwdArgs_.params[k], slot.name));
      argAttrs[layout_.firstStateArg() + state] = name;
      resultAttrs[layout_.firstStateResult() + state] = name;
      ++state;
    }
  for (const SlotSpec &slot : globals_) {
    DictionaryAttr name = named((optName() + "/" + slot.name).str());
    argAttrs[layout_.firstStateArg() + state] = name;
    resultAttrs[layout_.firstStateResult() + state] = name;
    ++state;
  }
  argAttrs[layout_.iterationsArg()] = named("iterations");
  argAttrs[layout_.learningRateArg()] = named("learning_rate");
  for (auto [k, i] : llvm::enumerate(fwdArgs_.inputs))
    argAttrs[layout_.firstInputArg() + k] = forward_.getArgAttrDict(i);
  for (unsigned k = 0; k < layout_.numTargets; ++k) {
    std::string name = config_.outputs.empty()
                           ? std::string("target")
                           : "target/" + config_.outputs[k].name;
    argAttrs[layout_.targetArg() + k] = b_.getDictionaryAttr(
        {b_.getNamedAttr(kc::attr::kName, b_.getStringAttr(name)),
         b_.getNamedAttr(kc::attr::kTarget, b_.getI64IntegerAttr(k))});
  }
  if (layout_.sampleWeight)
    argAttrs[layout_.sampleWeightArg()] = named("sample_weight");

  resultAttrs[layout_.lossResult()] = named("loss");
  for (auto [k, name] : llvm::enumerate(layout_.metrics))
    resultAttrs[layout_.firstMetricResult() + k] = named(name);
  resultAttrs[layout_.iterationsResult()] = named("iterations");
  step_.setAllArgAttrs(argAttrs);
  step_.setAllResultAttrs(resultAttrs);
}

/// The `kc.train_step` attribute getTrainStepLayout reads back.
void TrainStepBuilder::setLayoutAttr() {
  auto i64 = [&](int64_t v) { return b_.getI64IntegerAttr(v); };
  llvm::SmallVector<Attribute> metrics;
  for (const std::string &name : layout_.metrics)
    metrics.push_back(b_.getStringAttr(name));
  llvm::SmallVector<NamedAttribute> fields = {
      b_.getNamedAttr("loss", b_.getStringAttr(layout_.loss)),
      b_.getNamedAttr("from_logits", b_.getBoolAttr(config_.loss.fromLogits)),
      b_.getNamedAttr("optimizer", b_.getStringAttr(layout_.optimizer)),
      b_.getNamedAttr("params", i64(layout_.numParams)),
      b_.getNamedAttr("optimizer_state", i64(layout_.numOptimizerState)),
      b_.getNamedAttr("inputs", i64(layout_.numInputs)),
      b_.getNamedAttr("metrics", b_.getArrayAttr(metrics))};
  // Optional: written only when they say something.
  if (llvm::any_of(layout_.statistics,
                   [](const std::string &s) { return !s.empty(); })) {
    llvm::SmallVector<Attribute> statistics;
    for (const std::string &s : layout_.statistics)
      statistics.push_back(b_.getStringAttr(s));
    fields.push_back(
        b_.getNamedAttr("metric_statistics", b_.getArrayAttr(statistics)));
  }
  if (!layout_.schedule.empty())
    fields.push_back(
        b_.getNamedAttr("lr_schedule", b_.getStringAttr(layout_.schedule)));
  if (layout_.sampleWeight)
    fields.push_back(b_.getNamedAttr("sample_weight", b_.getBoolAttr(true)));
  if (layout_.numTargets != 1)
    fields.push_back(b_.getNamedAttr("targets", i64(layout_.numTargets)));
  if (llvm::any_of(layout_.stateInit, [](double v) { return v != 0; }))
    fields.push_back(b_.getNamedAttr(
        "state_init", b_.getDenseF64ArrayAttr(layout_.stateInit)));
  kc::setTrainStep(step_, b_.getDictionaryAttr(fields));
}

/// @train_step now returns the params' updates; @forward returns its
/// prediction alone, as every later consumer of it expects.
void TrainStepBuilder::dropForwardUpdates() {
  if (updated_.empty() && !addedLossResult_ && maskResults_.empty())
    return;
  llvm::BitVector drop(forward_.getNumResults());
  for (auto [k, r] : updated_)
    drop.set(r);
  for (auto [r, k] : maskResults_)
    drop.set(r);
  if (addedLossResult_)
    drop.set(*addedLossResult_);
  Operation *ret = forward_.getBody().front().getTerminator();
  for (int r = static_cast<int>(drop.size()) - 1; r >= 0; --r)
    if (drop.test(r))
      ret->eraseOperand(r);
  forward_.eraseResults(drop);
}

struct BuildTrainStepPass : impl::KcBuildTrainStepBase<BuildTrainStepPass> {
  using KcBuildTrainStepBase::KcBuildTrainStepBase;

  void runOnOperation() override;

private:
  /// This pass's option values, as the options struct.
  KcBuildTrainStepOptions currentOptions() const;
};

KcBuildTrainStepOptions BuildTrainStepPass::currentOptions() const {
  KcBuildTrainStepOptions o;
  o.loss = loss;
  o.fromLogits = fromLogits;
  o.optimizer = optimizer;
  o.momentum = momentum;
  o.nesterov = nesterov;
  o.beta1 = beta1;
  o.beta2 = beta2;
  o.epsilon = epsilon;
  o.rho = rho;
  o.amsgrad = amsgrad;
  o.centered = centered;
  o.initialAccumulatorValue = initialAccumulatorValue;
  o.weightDecay = weightDecay;
  o.clipnorm = clipnorm;
  o.clipvalue = clipvalue;
  o.globalClipnorm = globalClipnorm;
  o.lrSchedule = lrSchedule;
  o.sampleWeight = sampleWeight;
  o.dataParallel = dataParallel;
  o.bucketBytes = bucketBytes;
  o.metrics = metrics;
  o.customObjects = customObjects;
  o.outputs = outputs;
  return o;
}

void BuildTrainStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>("forward");
  if (!forward) {
    module.emitError("kc-build-train-step expects a func.func @forward");
    return signalPassFailure();
  }
  if (module.lookupSymbol("train_step")) {
    module.emitError("module already has a @train_step");
    return signalPassFailure();
  }
  llvm::Expected<TrainingConfig> config =
      fromTrainStepOptions(currentOptions());
  if (!config) {
    module.emitError(llvm::toString(config.takeError()));
    return signalPassFailure();
  }
  TrainStepBuilder builder(forward, *config);
  if (failed(builder.build()))
    return signalPassFailure();
  numTrainable += builder.numTrainable();
  numFrozen += builder.numFrozen();
}

} // namespace
} // namespace kcc

namespace kcc {

std::string customFunctionSymbol(llvm::StringRef name, unsigned output) {
  return ("kc.custom." + llvm::Twine(output) + "." + name).str();
}

std::optional<TrainStepLayout> getTrainStepLayout(func::FuncOp f) {
  DictionaryAttr dict = kc::getTrainStep(f);
  if (!dict)
    return std::nullopt;
  auto params = dict.getAs<IntegerAttr>("params");
  auto state = dict.getAs<IntegerAttr>("optimizer_state");
  auto inputs = dict.getAs<IntegerAttr>("inputs");
  auto metrics = dict.getAs<ArrayAttr>("metrics");
  auto loss = dict.getAs<StringAttr>("loss");
  auto optimizer = dict.getAs<StringAttr>("optimizer");
  if (!params || !state || !inputs || !metrics || !loss || !optimizer)
    return std::nullopt;
  TrainStepLayout layout;
  layout.numParams = params.getInt();
  layout.numOptimizerState = state.getInt();
  layout.numInputs = inputs.getInt();
  for (Attribute m : metrics) {
    auto name = dyn_cast<StringAttr>(m);
    if (!name)
      return std::nullopt;
    layout.metrics.push_back(name.str());
  }
  layout.loss = loss.str();
  layout.optimizer = optimizer.str();
  layout.statistics.assign(layout.metrics.size(), "");
  if (Attribute stats = dict.get("metric_statistics")) {
    auto list = dyn_cast<ArrayAttr>(stats);
    if (!list || list.size() != layout.metrics.size())
      return std::nullopt;
    for (auto [i, a] : llvm::enumerate(list)) {
      auto text = dyn_cast<StringAttr>(a);
      if (!text)
        return std::nullopt;
      layout.statistics[i] = text.str();
    }
  }
  if (Attribute schedule = dict.get("lr_schedule")) {
    auto text = dyn_cast<StringAttr>(schedule);
    if (!text)
      return std::nullopt;
    layout.schedule = text.str();
  }
  layout.stateInit.assign(layout.numOptimizerState, 0.0);
  if (Attribute init = dict.get("state_init")) {
    auto values = dyn_cast<DenseF64ArrayAttr>(init);
    if (!values || values.size() != layout.numOptimizerState)
      return std::nullopt;
    layout.stateInit.assign(values.asArrayRef().begin(),
                            values.asArrayRef().end());
  }
  if (Attribute targets = dict.get("targets")) {
    auto count = dyn_cast<IntegerAttr>(targets);
    if (!count || count.getInt() < 1)
      return std::nullopt;
    layout.numTargets = count.getInt();
  }
  if (Attribute weighted = dict.get("sample_weight")) {
    auto flag = dyn_cast<BoolAttr>(weighted);
    if (!flag)
      return std::nullopt;
    layout.sampleWeight = flag.getValue();
  }
  if (f.getNumArguments() != layout.numArgs() ||
      f.getNumResults() != layout.iterationsResult() + 1)
    return std::nullopt;
  return layout;
}

} // namespace kcc
