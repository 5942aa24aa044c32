//===- Jit.cpp - kcc::jit: a model's training step as an Executable -------===//

#include "frontend/training/Jit.h"

#include "frontend/Trace.h"
#include "passes/Losses.h"
#include "passes/Optimizers.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

namespace kcc {

void validateJitOptions(const JitOptions &options) {
  std::optional<LossKind> loss = parseLoss(options.loss);
  if (!loss)
    throw Error("compile: unknown loss '" + options.loss + "'");
  if (!parseOptimizer(options.optimizer))
    throw Error("compile: unknown optimizer '" + options.optimizer + "'");
  for (const std::string &m : options.metrics)
    if (!parseMetric(m, *loss))
      throw Error("compile: unknown metric '" + m + "' for loss " +
                  options.loss);
  if (options.batch < 1)
    throw Error("compile: batch must be positive, got " +
                std::to_string(options.batch));
}

mlir::OwningOpRef<mlir::ModuleOp> buildTrainModule(mlir::MLIRContext &ctx,
                                                   Model &model,
                                                   const JitOptions &options) {
  validateJitOptions(options);
  TraceOptions trace;
  trace.batch = options.batch;
  trace.training = true;
  mlir::OwningOpRef<mlir::ModuleOp> module = traceForward(ctx, model, trace);

  KcBuildTrainStepOptions pass;
  pass.loss = options.loss;
  pass.fromLogits = options.fromLogits;
  pass.optimizer = options.optimizer;
  pass.momentum = options.momentum;
  pass.nesterov = options.nesterov;
  pass.beta1 = options.beta1;
  pass.beta2 = options.beta2;
  pass.epsilon = options.epsilon;
  pass.rho = options.rho;
  pass.metrics = options.metrics;
  std::string diagnostics;
  {
    // Collect the pipeline's diagnostics into the kcc::Error message.
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    mlir::PassManager pm(&ctx);
    buildTrainPipeline(pm, pass);
    if (mlir::failed(pm.run(*module)))
      throw Error("compile: building the train step of model '" +
                  model.name() + "' failed:\n" + diagnostics);
  }

  // The pipeline keeps the training-mode @forward; predict wants Keras's
  // inference call (Dropout off, no step argument).
  if (model.usesRandomness()) {
    TraceOptions inference;
    inference.batch = options.batch;
    mlir::OwningOpRef<mlir::ModuleOp> fwd = traceForward(ctx, model, inference);
    if (auto old = module->lookupSymbol<mlir::func::FuncOp>("forward"))
      old.erase();
    auto f = fwd->lookupSymbol<mlir::func::FuncOp>("forward");
    f->remove();
    module->push_back(f);
  }
  return module;
}

Executable jit(Model &model, const JitOptions &options) {
  auto ctx = std::make_shared<mlir::MLIRContext>();
  registerFrontendDialects(*ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildTrainModule(*ctx, model, options);
  ExecOptions exec;
  exec.mode = options.mode;
  exec.cpu = options.cpu;
  exec.log = options.log;
  std::optional<OptimizerKind> opt = parseOptimizer(options.optimizer);
  exec.learningRate = options.learningRate.value_or(defaultLearningRate(*opt));
  return Executable(std::move(ctx), std::move(module), model.getWeights(),
                    exec);
}

Executable jitInference(Model &model, int64_t batch, ExecMode mode,
                        llvm::raw_ostream *log) {
  auto ctx = std::make_shared<mlir::MLIRContext>();
  registerFrontendDialects(*ctx);
  TraceOptions trace;
  trace.batch = batch;
  mlir::OwningOpRef<mlir::ModuleOp> module = traceForward(*ctx, model, trace);
  ExecOptions exec;
  exec.mode = mode;
  exec.log = log;
  return Executable(std::move(ctx), std::move(module), model.getWeights(),
                    exec);
}

} // namespace kcc
