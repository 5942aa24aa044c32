//===- Pipelines.cpp - Named kc pipelines ---------------------------------===//

#include "passes/Passes.h"
#include "ir/KcDialect.h"
#include "passes/TrainStep.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace kcc {

namespace {
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// kc-train-pipeline's options: those of kc-build-train-step.
struct TrainPipelineOptions
    : mlir::PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> loss{*this, "loss",
                           llvm::cl::desc("the loss (see kc-build-train-step)"),
                           llvm::cl::init("sparse_categorical_crossentropy")};
  Option<bool> fromLogits{*this, "from-logits",
                          llvm::cl::desc("the prediction is logits"),
                          llvm::cl::init(false)};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd | adam | rmsprop"),
                                llvm::cl::init("adam")};
  Option<double> momentum{*this, "momentum", llvm::cl::init(0.0)};
  Option<bool> nesterov{*this, "nesterov", llvm::cl::init(false)};
  Option<double> beta1{*this, "beta1", llvm::cl::init(0.9)};
  Option<double> beta2{*this, "beta2", llvm::cl::init(0.999)};
  Option<double> epsilon{*this, "epsilon", llvm::cl::init(1e-7)};
  Option<double> rho{*this, "rho", llvm::cl::init(0.9)};
  ListOption<std::string> metrics{*this, "metrics",
                                  llvm::cl::desc("e.g. accuracy")};

  /// The pass options; `metricStorage` backs their metrics ArrayRef.
  KcBuildTrainStepOptions
  toPassOptions(std::vector<std::string> &metricStorage) const {
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
    metricStorage.assign(metrics.begin(), metrics.end());
    o.metrics = metricStorage;
    return o;
  }
};
} // namespace

void buildImportPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void buildTrainPipeline(mlir::OpPassManager &pm,
                        const KcBuildTrainStepOptions &options) {
  // Clean the forward first so the reverse sweep differentiates small IR.
  buildImportPipeline(pm);
  pm.addPass(createKcBuildTrainStep(options));
  // The update math repeats splat constants per parameter; CSE shares them.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

void registerPasses() {
  registerKcPasses();
  mlir::PassPipelineRegistration<>(
      "kc-import-pipeline",
      "Canonicalize and CSE a traced or imported kc module",
      buildImportPipeline);
  mlir::PassPipelineRegistration<TrainPipelineOptions>(
      "kc-train-pipeline",
      "Import clean-up, kc-build-train-step, then canonicalize and CSE",
      [](mlir::OpPassManager &pm, const TrainPipelineOptions &options) {
        std::vector<std::string> metrics;
        buildTrainPipeline(pm, options.toPassOptions(metrics));
      });
}

} // namespace kcc
