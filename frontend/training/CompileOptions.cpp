//===- CompileOptions.cpp - A TrainingConfig and losses written in C++ ----===//

#include "frontend/training/CompileOptions.h"

#include "engine/interpreter/Interpreter.h"
#include "frontend/Ops.h"
#include "frontend/Trace.h"
#include "passes/Losses.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

using namespace kcc;

namespace {

Shape shapeOf(mlir::RankedTensorType t) {
  return Shape(t.getShape().begin(), t.getShape().end());
}

const CustomObject &objectNamed(const CompileOptions &options,
                                const std::string &name) {
  auto it = options.customObjects.find(name);
  if (it == options.customObjects.end() || !it->second.fn)
    throw Error("compile: custom object '" + name +
                "' is named by the config but has no function in "
                "CompileOptions::customObjects");
  return it->second;
}

/// Traces `object` as @customFunctionSymbol(name, k)(y_true: target,
/// y_pred: pred) at the end of `module`.
void traceOne(mlir::ModuleOp module, const std::string &name, unsigned k,
              const CustomObject &object, mlir::RankedTensorType target,
              mlir::RankedTensorType pred, const char *what) {
  std::string symbol = customFunctionSymbol(name, k);
  if (module.lookupSymbol(symbol))
    return;
  mlir::OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  mlir::Location loc =
      mlir::NameLoc::get(b.getStringAttr(std::string(what) + " " + name));
  auto fn = b.create<mlir::func::FuncOp>(loc, symbol,
                                         b.getFunctionType({target, pred}, {}));
  fn.setPrivate();
  mlir::Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  Tensor out;
  try {
    TraceContext trace(b);
    LayerScope scope(name);
    Tensor yTrue = Tensor::traced(entry->getArgument(0), shapeOf(target),
                                  dtypeOf(target.getElementType()));
    Tensor yPred = Tensor::traced(entry->getArgument(1), shapeOf(pred),
                                  dtypeOf(pred.getElementType()));
    out = object.fn(yTrue, yPred);
  } catch (const Error &e) {
    fn.erase();
    throw Error(std::string("compile: custom ") + what + " '" + name +
                "': " + e.what());
  }
  if (!out.isTraced()) {
    fn.erase();
    throw Error(std::string("compile: custom ") + what + " '" + name +
                "' must return a value computed from y_true and y_pred, got " +
                (out.defined() ? out.describe() : std::string("nothing")));
  }
  b.create<mlir::func::ReturnOp>(loc, out.value());
  fn.setType(b.getFunctionType({target, pred}, {out.value().getType()}));
  if (mlir::failed(mlir::verify(fn)))
    throw Error(std::string("compile: custom ") + what + " '" + name +
                "' traced to invalid IR");
}

/// Output `k`'s loss and metrics, predicting `pred`.
void traceOutput(mlir::ModuleOp module, const CompileOptions &options,
                 unsigned k, const LossConfig &loss,
                 const std::vector<std::string> &metrics,
                 mlir::RankedTensorType pred) {
  if (pred.getRank() < 1)
    return; // kc-build-train-step says why it cannot train this output
  mlir::RankedTensorType target = targetTypeOf(options, loss, pred);
  if (!loss.custom.empty())
    traceOne(module, loss.custom, k, objectNamed(options, loss.custom), target,
             pred, "loss");
  for (const std::string &m : metrics)
    if (options.customObjects.count(m))
      traceOne(module, m, k, objectNamed(options, m), target, pred, "metric");
}

} // namespace

TrainingConfig CompileOptions::resolvedConfig() const {
  TrainingConfig c = config;
  for (const auto &[name, object] : customObjects)
    if (!c.isCustomObject(name))
      c.customObjects.push_back(name);
  auto resolve = [&](LossConfig &loss) {
    auto it = customObjects.find(loss.custom);
    if (loss.custom.empty() || it == customObjects.end())
      return;
    std::optional<DType> t = it->second.targetDType;
    loss.kind = t && !isFloat(*t) ? LossKind::SparseCategoricalCrossentropy
                                  : LossKind::CategoricalCrossentropy;
    loss.fromLogits = false;
  };
  resolve(c.loss);
  for (OutputTraining &o : c.outputs)
    resolve(o.loss);
  return c;
}

mlir::RankedTensorType kcc::targetTypeOf(const CompileOptions &options,
                                         const LossConfig &loss,
                                         mlir::RankedTensorType pred) {
  auto it = options.customObjects.find(loss.custom);
  if (loss.custom.empty() || it == options.customObjects.end())
    return targetType(loss.kind, pred);
  const CustomObject &object = it->second;
  Shape shape = object.targetShape
                    ? *object.targetShape
                    : Shape(pred.getShape().begin() + 1, pred.getShape().end());
  shape.insert(shape.begin(), pred.getDimSize(0));
  DType dtype =
      object.targetDType ? *object.targetDType : dtypeOf(pred.getElementType());
  return toTensorType(pred.getContext(), shape, dtype);
}

void kcc::traceCustomObjects(mlir::ModuleOp module,
                             const CompileOptions &options) {
  if (options.customObjects.empty())
    return;
  auto forward = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward)
    throw Error("compile: the module has no @forward to train");
  TrainingConfig config = options.resolvedConfig();
  auto predOf = [&](unsigned k) {
    return mlir::dyn_cast<mlir::RankedTensorType>(
        forward.getFunctionType().getResult(k));
  };
  if (config.outputs.empty()) {
    if (mlir::RankedTensorType pred = predOf(0))
      traceOutput(module, options, 0, config.loss, config.metrics, pred);
    return;
  }
  for (auto [k, out] : llvm::enumerate(config.outputs))
    if (k < forward.getNumResults())
      if (mlir::RankedTensorType pred = predOf(k))
        traceOutput(module, options, k, out.loss, out.metrics, pred);
}
