//===- Jit.cpp - kcc::jit: a model's training step as an Executable -------===//

#include "frontend/training/Jit.h"

#include "engine/CompileTiming.h"
#include "frontend/Trace.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

namespace kcc {

void checkTrainingConfig(const TrainingConfig &config) {
  if (llvm::Error err = config.validate())
    throw Error("compile: " + llvm::toString(std::move(err)));
}

ExecOptions execOptions(const TrainingConfig &config,
                        const JitOptions &options) {
  ExecOptions exec;
  exec.mode = config.mode;
  exec.learningRate = config.optimizer.resolvedLearningRate();
  exec.cpu = options.cpu;
  exec.log = options.log;
  return exec;
}

mlir::OwningOpRef<mlir::ModuleOp>
buildTrainModule(mlir::MLIRContext &ctx, Model &model,
                 const CompileOptions &options) {
  TrainingConfig config = options.resolvedConfig();
  checkTrainingConfig(config);
  if (!config.dtypePolicy.empty())
    model.setDTypePolicy(config.dtypePolicy);
  TraceOptions trace;
  trace.batch = config.batch;
  trace.training = true;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    CompilePhase phase("trace");
    module = traceForward(ctx, model, trace);
    traceCustomObjects(*module, options);
  }

  std::string diagnostics;
  {
    // Collect the pipeline's diagnostics into the kcc::Error message.
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
      diagnostics += d.str() + "\n";
      return mlir::success();
    });
    CompilePhase phase("kc-train-pipeline");
    mlir::PassManager pm(&ctx);
    phase.timePasses(pm);
    buildTrainPipeline(pm, config);
    if (mlir::failed(pm.run(*module)))
      throw Error("compile: building the train step of model '" + model.name() +
                  "' failed:\n" + diagnostics);
  }

  // The pipeline keeps the training-mode @forward; predict wants Keras's
  // inference call (Dropout off, no step argument, BatchNormalization on its
  // moving statistics).
  if (model.trainingDiffers()) {
    TraceOptions inference;
    inference.batch = config.batch;
    mlir::OwningOpRef<mlir::ModuleOp> fwd = traceForward(ctx, model, inference);
    if (auto old = module->lookupSymbol<mlir::func::FuncOp>("forward"))
      old.erase();
    auto f = fwd->lookupSymbol<mlir::func::FuncOp>("forward");
    f->remove();
    module->push_back(f);
  }
  return module;
}

Executable jit(Model &model, const CompileOptions &compile,
               const JitOptions &options) {
  auto ctx = std::make_shared<mlir::MLIRContext>();
  registerFrontendDialects(*ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildTrainModule(*ctx, model, compile);
  return Executable(std::move(ctx), std::move(module), model.getWeights(),
                    execOptions(compile.config, options));
}

Executable jitInference(Model &model, int64_t batch, ExecMode mode,
                        llvm::raw_ostream *log, bool outputMasks) {
  auto ctx = std::make_shared<mlir::MLIRContext>();
  registerFrontendDialects(*ctx);
  TraceOptions trace;
  trace.batch = batch;
  trace.outputMasks = outputMasks;
  mlir::OwningOpRef<mlir::ModuleOp> module = traceForward(*ctx, model, trace);
  ExecOptions exec;
  exec.mode = mode;
  exec.log = log;
  return Executable(std::move(ctx), std::move(module), model.getWeights(),
                    exec);
}

} // namespace kcc
