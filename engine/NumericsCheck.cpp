//===- NumericsCheck.cpp - Where a NaN or an inf first appears ------------===//
//
// An Interpreter observer counts NaNs and infinities in every op's result
// and stops the run at the first op that has any. The op's location names
// the layer: tracing locates every op of a layer at the layer's name.
//
//===----------------------------------------------------------------------===//

#include "engine/NumericsCheck.h"
#include "engine/interpreter/Interpreter.h"
#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Location.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace kcc;

namespace {

template <typename T> NonFiniteCount countIn(const T *p, int64_t n) {
  NonFiniteCount c;
  for (int64_t i = 0; i < n; ++i) {
    c.nans += std::isnan(p[i]);
    c.infs += std::isinf(p[i]);
  }
  return c;
}

/// The layer name of a traced op: its NameLoc (possibly inside a fused or
/// call-site location); otherwise the printed location.
std::string layerOf(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return name.getName().str();
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return layerOf(site.getCallee());
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return os.str();
}

std::string argumentName(func::FuncOp func, unsigned i) {
  if (std::optional<llvm::StringRef> name = kc::getArgName(func, i))
    return name->str();
  return "argument #" + std::to_string(i);
}

} // namespace

NonFiniteCount kcc::countNonFinite(const NDArray &array) {
  switch (array.dtype()) {
  case DType::F32:
    return countIn(array.data<float>(), array.numel());
  case DType::F64:
    return countIn(array.data<double>(), array.numel());
  default:
    return {};
  }
}

std::string NonFiniteOp::describe() const {
  std::string text =
      "layer '" + layer + "' (" + op + ", op " + std::to_string(opIndex) +
      " of @" + function + "): " + std::to_string(count.nans) + " NaN, " +
      std::to_string(count.infs) + " inf in " + shapeToString(shape);
  if (!nonFiniteArguments.empty()) {
    text += "; non-finite inputs:";
    for (const std::string &name : nonFiniteArguments)
      text += " " + name;
  }
  return text;
}

std::optional<NonFiniteOp>
kcc::findFirstNonFinite(func::FuncOp func, const std::vector<NDArray> &args) {
  std::optional<NonFiniteOp> found;
  int64_t index = 0;
  Interpreter interpreter;
  interpreter.setObserver([&](Operation *op, const NDArray &result) {
    int64_t at = index++;
    if (isa<kc::ConstantOp>(op))
      return true;
    NonFiniteCount count = countNonFinite(result);
    if (!count.any())
      return true;
    found.emplace();
    found->function = func.getSymName().str();
    found->layer = layerOf(op->getLoc());
    found->op = op->getName().getStringRef().str();
    found->opIndex = at;
    found->shape = result.shape();
    found->count = count;
    return false;
  });
  interpreter.run(func, args);
  interpreter.clearConstantCache();
  if (found)
    for (auto [i, arg] : llvm::enumerate(args))
      if (countNonFinite(arg).any())
        found->nonFiniteArguments.push_back(
            argumentName(func, static_cast<unsigned>(i)));
  return found;
}

StepInputs kcc::captureStepInputs(const Executable &exe) {
  StepInputs in;
  in.params = exe.getWeights();
  in.state = exe.getOptimizerState();
  in.iterations = exe.iterations();
  in.learningRate = exe.learningRate();
  return in;
}

std::optional<NonFiniteOp> kcc::checkTrainStep(func::FuncOp trainStep,
                                               const StepInputs &before,
                                               const NDArray &x,
                                               const NDArray &y) {
  std::optional<TrainStepLayout> layout = getTrainStepLayout(trainStep);
  if (!layout)
    throw Error("numerics check: @" + trainStep.getSymName().str() +
                " is not a training step (no kc.train_step layout)");
  if (before.params.size() != layout->numParams ||
      before.state.size() != layout->numOptimizerState ||
      layout->numInputs != 1)
    throw Error("numerics check: @" + trainStep.getSymName().str() + " takes " +
                std::to_string(layout->numParams) + " parameters, " +
                std::to_string(layout->numOptimizerState) +
                " optimizer slots and " + std::to_string(layout->numInputs) +
                " inputs; the step had " +
                std::to_string(before.params.size()) + ", " +
                std::to_string(before.state.size()) + " and 1");
  std::vector<NDArray> args(trainStep.getNumArguments());
  for (unsigned i = 0; i < layout->numParams; ++i)
    args[layout->firstParamArg() + i] = before.params[i];
  for (unsigned i = 0; i < layout->numOptimizerState; ++i)
    args[layout->firstStateArg() + i] = before.state[i];
  args[layout->iterationsArg()] =
      NDArray::scalar(static_cast<double>(before.iterations), DType::I64);
  auto lrType = cast<RankedTensorType>(
      trainStep.getArgument(layout->learningRateArg()).getType());
  args[layout->learningRateArg()] =
      NDArray::scalar(before.learningRate, dtypeOf(lrType.getElementType()));
  args[layout->firstInputArg()] = x;
  args[layout->targetArg()] = y;
  std::optional<NonFiniteOp> found = findFirstNonFinite(trainStep, args);
  // The data arrays by the names the user gave them (x, y), as Keras's
  // fit(x, y) does, rather than by the step's argument.
  if (found)
    for (std::string &name : found->nonFiniteArguments) {
      if (name == argumentName(trainStep, layout->firstInputArg()))
        name = "x";
      else if (name == argumentName(trainStep, layout->targetArg()))
        name = "y";
    }
  return found;
}
