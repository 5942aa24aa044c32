//===- BuildTrainStep.cpp - @forward -> @train_step -----------------------===//
//
// Builds the whole training step as one function: the cloned forward body,
// the loss and metrics (Losses.h), the reverse sweep (kcc::buildGradients)
// and the optimizer update (Optimizers.h). Everything downstream (fusion,
// memory planning, codegen, the interpreter) then optimizes or runs a single
// graph, which is where a compiler beats per-op dispatch.
//
//===----------------------------------------------------------------------===//

#include "ir/KcDialect.h"
#include "passes/Autodiff.h"
#include "passes/KcEmitter.h"
#include "passes/Losses.h"
#include "passes/Optimizers.h"
#include "passes/Passes.h"
#include "passes/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/Support/Debug.h"

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
  llvm::SmallVector<unsigned> params;  ///< in signature order
  llvm::SmallVector<unsigned> inputs;  ///< ordered by kc.input
  std::optional<unsigned> step;        ///< the dropout counter, if any
};

bool isTrainable(func::FuncOp f, unsigned i) {
  auto attr = f.getArgAttrOfType<BoolAttr>(i, "kc.trainable");
  return attr && attr.getValue();
}

std::string paramName(func::FuncOp f, unsigned i) {
  if (auto name = f.getArgAttrOfType<StringAttr>(i, "kc.name"))
    return name.str();
  return "param" + std::to_string(i);
}

FailureOr<ForwardArgs> classifyArgs(func::FuncOp forward) {
  ForwardArgs args;
  llvm::SmallVector<std::pair<int64_t, unsigned>> inputs;
  for (unsigned i = 0, e = forward.getNumArguments(); i < e; ++i) {
    if (auto input = forward.getArgAttrOfType<IntegerAttr>(i, "kc.input"))
      inputs.push_back({input.getInt(), i});
    else if (forward.getArgAttr(i, "kc.step"))
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

struct BuildTrainStepPass
    : impl::KcBuildTrainStepBase<BuildTrainStepPass> {
  using KcBuildTrainStepBase::KcBuildTrainStepBase;

  void runOnOperation() override;

private:
  LogicalResult build(func::FuncOp forward, LossKind lossKind,
                      llvm::ArrayRef<MetricKind> metricKinds,
                      const OptimizerConfig &config);

  Statistic numTrainable{this, "trainable-params",
                         "Parameters given a gradient and an update"};
  Statistic numFrozen{this, "frozen-params",
                      "Non-trainable parameters passed through"};
};

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

  std::optional<LossKind> lossKind = parseLoss(loss);
  if (!lossKind) {
    module.emitError("unknown loss '") << loss << "'";
    return signalPassFailure();
  }
  std::optional<OptimizerKind> optKind = parseOptimizer(optimizer);
  if (!optKind) {
    module.emitError("unknown optimizer '") << optimizer << "'";
    return signalPassFailure();
  }
  llvm::SmallVector<MetricKind> metricKinds;
  for (const std::string &name : metrics) {
    std::optional<MetricKind> kind = parseMetric(name, *lossKind);
    if (!kind) {
      module.emitError("unknown metric '")
          << name << "' for loss " << lossName(*lossKind);
      return signalPassFailure();
    }
    metricKinds.push_back(*kind);
  }
  OptimizerConfig config;
  config.kind = *optKind;
  config.momentum = momentum;
  config.nesterov = nesterov;
  config.beta1 = beta1;
  config.beta2 = beta2;
  config.epsilon = epsilon;
  config.rho = rho;
  if (failed(build(forward, *lossKind, metricKinds, config)))
    return signalPassFailure();
}

LogicalResult BuildTrainStepPass::build(func::FuncOp forward,
                                        LossKind lossKind,
                                        llvm::ArrayRef<MetricKind> metricKinds,
                                        const OptimizerConfig &config) {
  MLIRContext *ctx = forward.getContext();
  FailureOr<ForwardArgs> fwdArgs = classifyArgs(forward);
  if (failed(fwdArgs))
    return failure();
  if (forward.getNumResults() != 1)
    return forward.emitOpError("expects one result (the prediction), got ")
           << forward.getNumResults();
  auto predType =
      dyn_cast<RankedTensorType>(forward.getFunctionType().getResult(0));
  RankedTensorType yType = targetType(lossKind, predType);
  if (!yType)
    return forward.emitOpError("result ")
           << forward.getFunctionType().getResult(0) << " cannot take the "
           << lossName(lossKind) << " loss (expects a float tensor of rank >= 1)";
  Type floatType = predType.getElementType();

  // Signature: params, optimizer state (param-major), iterations, lr,
  // inputs, target.
  llvm::SmallVector<std::string> slots = slotNames(config);
  llvm::StringRef optName = optimizerName(config.kind);
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<DictionaryAttr> argAttrs;
  auto named = [&](llvm::StringRef name) {
    return DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, "kc.name"),
                             StringAttr::get(ctx, name))});
  };
  for (unsigned i : fwdArgs->params) {
    argTypes.push_back(forward.getArgument(i).getType());
    argAttrs.push_back(forward.getArgAttrDict(i) ? forward.getArgAttrDict(i)
                                                 : named(paramName(forward, i)));
  }
  llvm::SmallVector<unsigned> trainable;
  for (unsigned i : fwdArgs->params)
    if (isTrainable(forward, i))
      trainable.push_back(i);
  numTrainable += trainable.size();
  numFrozen += fwdArgs->params.size() - trainable.size();
  llvm::SmallVector<std::string> slotArgNames;
  for (unsigned i : trainable)
    for (const std::string &slot : slots) {
      argTypes.push_back(forward.getArgument(i).getType());
      slotArgNames.push_back(
          (optName + "/" + slot + "/" + paramName(forward, i)).str());
      argAttrs.push_back(named(slotArgNames.back()));
    }
  auto i64Scalar = RankedTensorType::get({}, IntegerType::get(ctx, 64));
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
  argTypes.append({i64Scalar, f32Scalar});
  argAttrs.append({named("iterations"), named("learning_rate")});
  for (unsigned i : fwdArgs->inputs) {
    argTypes.push_back(forward.getArgument(i).getType());
    argAttrs.push_back(forward.getArgAttrDict(i));
  }
  argTypes.push_back(yType);
  argAttrs.push_back(DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, "kc.name"),
                           StringAttr::get(ctx, "target")),
            NamedAttribute(StringAttr::get(ctx, "kc.target"),
                           IntegerAttr::get(IntegerType::get(ctx, 64), 0))}));

  OpBuilder b(forward);
  b.setInsertionPointAfter(forward);
  auto step = b.create<func::FuncOp>(forward.getLoc(), "train_step",
                                     b.getFunctionType(argTypes, {}));
  Block *body = step.addEntryBlock();
  b.setInsertionPointToStart(body);
  unsigned numParams = fwdArgs->params.size();
  unsigned numState = slotArgNames.size();
  unsigned iterIdx = numParams + numState;
  Value iterations = body->getArgument(iterIdx);
  Value lr = body->getArgument(iterIdx + 1);
  Value target = body->getArgument(body->getNumArguments() - 1);

  // Clone the forward body.
  IRMapping map;
  for (auto [k, i] : llvm::enumerate(fwdArgs->params))
    map.map(forward.getArgument(i), body->getArgument(k));
  for (auto [k, i] : llvm::enumerate(fwdArgs->inputs))
    map.map(forward.getArgument(i), body->getArgument(iterIdx + 2 + k));
  if (fwdArgs->step) {
    Location loc = forward.getArgument(*fwdArgs->step).getLoc();
    Type stepType = forward.getArgument(*fwdArgs->step).getType();
    Value counter = iterations;
    if (stepType != iterations.getType())
      counter = b.create<kc::CastOp>(loc, stepType, iterations);
    map.map(forward.getArgument(*fwdArgs->step), counter);
  }
  Operation *fwdReturn = forward.getBody().front().getTerminator();
  for (Operation &op : forward.getBody().front().without_terminator())
    b.clone(op, map);
  Value pred = map.lookupOrDefault(fwdReturn->getOperand(0));

  // Loss, its gradients, then the metrics (outside the differentiated
  // graph, so the reverse sweep never sees them).
  Location lossLoc = NameLoc::get(StringAttr::get(ctx, "loss"));
  Value lossValue =
      buildLoss(b, lossLoc, lossKind, fromLogits, pred, target);
  llvm::SmallVector<Value> wrt;
  llvm::DenseMap<unsigned, unsigned> trainableIndex;
  for (auto [k, i] : llvm::enumerate(fwdArgs->params))
    if (isTrainable(forward, i)) {
      trainableIndex[k] = wrt.size();
      wrt.push_back(body->getArgument(k));
    }
  llvm::SmallVector<Value> grads;
  if (!wrt.empty()) {
    FailureOr<llvm::SmallVector<Value>> g = buildGradients(b, lossValue, wrt);
    if (failed(g)) {
      step.erase();
      return forward.emitOpError("could not be differentiated");
    }
    grads = std::move(*g);
  }
  llvm::SmallVector<Value> metricValues;
  llvm::SmallVector<Attribute> metricNames;
  for (auto [kind, name] : llvm::zip(metricKinds, metrics)) {
    metricValues.push_back(
        buildMetric(b, NameLoc::get(StringAttr::get(ctx, name)), kind, pred,
                    target));
    metricNames.push_back(StringAttr::get(ctx, name));
  }

  // Optimizer update.
  Location optLoc = NameLoc::get(StringAttr::get(ctx, optName));
  StepScalars scalars =
      buildStepScalars(b, optLoc, config, iterations, lr, floatType);
  llvm::SmallVector<Value> newParams, newState;
  for (unsigned k = 0; k < numParams; ++k) {
    Value param = body->getArgument(k);
    auto it = trainableIndex.find(k);
    if (it == trainableIndex.end()) {
      newParams.push_back(param); // frozen: passed through
      continue;
    }
    unsigned t = it->second;
    ValueRange paramSlots =
        body->getArguments().slice(numParams + t * slots.size(), slots.size());
    Location loc = NameLoc::get(StringAttr::get(
        ctx, optName + "/" + paramName(forward, fwdArgs->params[k])));
    ParamUpdate u =
        buildUpdate(b, loc, config, scalars, param, grads[t], paramSlots);
    newParams.push_back(u.param);
    newState.append(u.slots.begin(), u.slots.end());
  }
  // iterations + 1: kc has float arithmetic only, and f64 holds every
  // integer below 2^53 exactly.
  KcEmitter e(b, optLoc);
  Value nextIter =
      e.cast(e.add(e.cast(iterations, b.getF64Type()), 1.0), b.getI64Type());

  llvm::SmallVector<Value> results{lossValue};
  results.append(metricValues);
  results.append(newParams);
  results.append(newState);
  results.push_back(nextIter);
  b.create<func::ReturnOp>(forward.getLoc(), results);
  step.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));

  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    if (attrs)
      step.setArgAttrs(i, attrs);
  unsigned r = 0;
  step.setResultAttrs(r++, named("loss"));
  for (Attribute name : metricNames)
    step.setResultAttrs(r++, named(cast<StringAttr>(name).getValue()));
  for (unsigned k = 0; k < numParams; ++k)
    step.setResultAttrs(r++, named(paramName(forward, fwdArgs->params[k])));
  for (const std::string &name : slotArgNames)
    step.setResultAttrs(r++, named(name));
  step.setResultAttrs(r++, named("iterations"));

  auto i64 = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  step->setAttr(
      "kc.train_step",
      b.getDictionaryAttr(
          {b.getNamedAttr("loss", b.getStringAttr(lossName(lossKind))),
           b.getNamedAttr("from_logits", b.getBoolAttr(fromLogits)),
           b.getNamedAttr("optimizer", b.getStringAttr(optName)),
           b.getNamedAttr("params", i64(numParams)),
           b.getNamedAttr("optimizer_state", i64(numState)),
           b.getNamedAttr("inputs", i64(fwdArgs->inputs.size())),
           b.getNamedAttr("metrics", b.getArrayAttr(metricNames))}));
  LLVM_DEBUG(llvm::dbgs() << "built @train_step: " << numParams << " params ("
                          << trainable.size() << " trainable), " << numState
                          << " state tensors\n");
  return success();
}

} // namespace
} // namespace kcc

namespace kcc {

std::optional<TrainStepLayout> getTrainStepLayout(func::FuncOp f) {
  auto dict = f->getAttrOfType<DictionaryAttr>("kc.train_step");
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
  if (f.getNumArguments() != layout.targetArg() + 1 ||
      f.getNumResults() != layout.iterationsResult() + 1)
    return std::nullopt;
  return layout;
}

} // namespace kcc
