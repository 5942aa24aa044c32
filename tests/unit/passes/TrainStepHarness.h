//===- TrainStepHarness.h - Build and run @train_step in tests --*- C++ -*-===//
//
// Parses a @forward, runs kc-build-train-step on it and runs the resulting
// @train_step through the interpreter, carrying params, optimizer state and
// the iteration count from step to step as a runtime would.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_PASSES_TRAINSTEPHARNESS_H
#define KCC_TESTS_UNIT_PASSES_TRAINSTEPHARNESS_H

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kcc {
namespace testing {

/// The tests' starting point: Keras's defaults with plain SGD, whose update
/// is the easiest to check by hand.
inline TrainingConfig sgdConfig() {
  TrainingConfig config;
  config.optimizer.kind = OptimizerKind::SGD;
  return config;
}

class TrainStepRunner {
public:
  /// `importPipeline`: clean the forward first, as kcc does.
  TrainStepRunner(const std::string &forwardIR, const TrainingConfig &o,
                  bool importPipeline = false) {
    ctx.loadDialect<kc::KcDialect, mlir::func::FuncDialect>();
    module = mlir::parseSourceString<mlir::ModuleOp>(forwardIR, &ctx);
    if (!module) {
      ADD_FAILURE() << "cannot parse the test's @forward";
      return;
    }
    mlir::PassManager pm(&ctx);
    if (importPipeline)
      buildImportPipeline(pm);
    pm.addPass(createKcBuildTrainStep(toTrainStepOptions(o)));
    if (mlir::failed(pm.run(*module))) {
      ADD_FAILURE() << "kc-build-train-step failed";
      return;
    }
    step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
    std::optional<TrainStepLayout> l = getTrainStepLayout(step);
    if (!l) {
      ADD_FAILURE() << "@train_step has no layout";
      return;
    }
    layout = *l;
    // Optimizer state starts where the layout says (zero for most),
    // shaped as the signature says.
    for (unsigned i = 0; i < layout.numOptimizerState; ++i) {
      auto t = mlir::cast<mlir::RankedTensorType>(
          step.getArgument(layout.numParams + i).getType());
      NDArray a =
          NDArray::zeros(Shape(t.getShape().begin(), t.getShape().end()),
                         dtypeOf(t.getElementType()));
      for (int64_t e = 0; e < a.numel(); ++e)
        a.set(e, layout.stateInit[i]);
      state.push_back(std::move(a));
    }
  }
  ~TrainStepRunner() { interpreter.clearConstantCache(); }

  bool ok() const { return static_cast<bool>(step); }

  /// One step; updates params, state and iterations; returns the loss and
  /// the metrics.
  std::vector<double> run(double lr, const NDArray &x, const NDArray &y) {
    std::vector<NDArray> args = params;
    args.insert(args.end(), state.begin(), state.end());
    args.push_back(
        NDArray::scalar(static_cast<double>(iterations), DType::I64));
    args.push_back(NDArray::scalar(lr, DType::F32));
    args.push_back(x);
    args.push_back(y);
    std::vector<NDArray> results = interpreter.run(step, args);
    std::vector<double> logs;
    for (unsigned i = 0; i < layout.firstParamResult(); ++i)
      logs.push_back(results[i].at(0));
    for (unsigned i = 0; i < layout.numParams; ++i)
      params[i] = results[layout.firstParamResult() + i];
    for (unsigned i = 0; i < layout.numOptimizerState; ++i)
      state[i] = results[layout.firstStateResult() + i];
    iterations = static_cast<int64_t>(results[layout.iterationsResult()].at(0));
    return logs;
  }

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp step;
  TrainStepLayout layout;
  Interpreter interpreter;
  std::vector<NDArray> params, state;
  int64_t iterations = 0;
};

} // namespace testing
} // namespace kcc

#endif // KCC_TESTS_UNIT_PASSES_TRAINSTEPHARNESS_H
