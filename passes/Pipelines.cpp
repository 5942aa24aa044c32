//===- Pipelines.cpp - Named kc pipelines ---------------------------------===//

#include "ir/KcDialect.h"
#include "passes/Passes.h"
#include "passes/TrainStep.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace kcc {

namespace {
#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// The train pipeline around an already configured kc-build-train-step.
void addTrainPipeline(mlir::OpPassManager &pm,
                      std::unique_ptr<mlir::Pass> trainStep) {
  // Clean the forward first so the reverse sweep differentiates small IR.
  buildImportPipeline(pm);
  pm.addPass(std::move(trainStep));
  // The update math repeats splat constants per parameter; CSE shares them.
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}
} // namespace

KcBuildTrainStepOptions toTrainStepOptions(const TrainingConfig &config) {
  assert(config.outputs.empty() &&
         "several outputs need storage for their option text");
  std::vector<std::string> none;
  return toTrainStepOptions(config, none);
}

KcBuildTrainStepOptions
toTrainStepOptions(const TrainingConfig &config,
                   std::vector<std::string> &outputStorage) {
  KcBuildTrainStepOptions o;
  // The loss's arguments travel in its text; from_logits in its own option.
  LossConfig loss = config.loss;
  loss.fromLogits = false;
  o.loss = loss.str();
  o.fromLogits = config.loss.fromLogits;
  o.metrics = config.metrics;
  o.customObjects = config.customObjects;
  outputStorage.clear();
  for (const OutputTraining &out : config.outputs)
    outputStorage.push_back(out.str());
  o.outputs = outputStorage;
  const OptimizerConfig &opt = config.optimizer;
  o.optimizer = optimizerName(opt.kind).str();
  o.momentum = opt.momentum;
  o.nesterov = opt.nesterov;
  o.beta1 = opt.beta1;
  o.beta2 = opt.resolvedBeta2();
  o.epsilon = opt.epsilon;
  o.rho = opt.rho;
  o.amsgrad = opt.amsgrad;
  o.centered = opt.centered;
  o.initialAccumulatorValue = opt.initialAccumulatorValue;
  o.weightDecay = opt.resolvedWeightDecay();
  o.clipnorm = opt.clipnorm;
  o.clipvalue = opt.clipvalue;
  o.globalClipnorm = opt.globalClipnorm;
  o.lrSchedule = opt.schedule ? opt.schedule->str() : "";
  o.sampleWeight = config.sampleWeight || !config.classWeight.empty();
  o.dataParallel = config.dataParallel;
  o.bucketBytes = config.bucketBytes;
  return o;
}

llvm::Expected<TrainingConfig>
fromTrainStepOptions(const KcBuildTrainStepOptions &options) {
  TrainingConfig config;
  config.customObjects.assign(options.customObjects.begin(),
                              options.customObjects.end());
  // Not a built-in loss: a custom object's name, which validate() checks.
  llvm::Expected<LossConfig> loss =
      LossConfig::parse(options.loss, /*allowCustom=*/true);
  if (!loss)
    return loss.takeError();
  config.loss = *loss;
  config.loss.fromLogits = config.loss.fromLogits || options.fromLogits;
  config.metrics.assign(options.metrics.begin(), options.metrics.end());
  for (const std::string &text : options.outputs) {
    llvm::Expected<OutputTraining> out = OutputTraining::parse(text);
    if (!out)
      return out.takeError();
    config.outputs.push_back(std::move(*out));
  }
  config.sampleWeight = options.sampleWeight;
  config.dataParallel = options.dataParallel;
  config.bucketBytes = options.bucketBytes;
  llvm::Expected<OptimizerKind> optimizer = parseOptimizer(options.optimizer);
  if (!optimizer)
    return optimizer.takeError();
  OptimizerConfig &opt = config.optimizer;
  opt.kind = *optimizer;
  opt.momentum = options.momentum;
  opt.nesterov = options.nesterov;
  opt.beta1 = options.beta1;
  // -1: the optimizer's own default (resolvedBeta2, resolvedWeightDecay).
  if (options.beta2 != -1)
    opt.beta2 = options.beta2;
  opt.epsilon = options.epsilon;
  opt.rho = options.rho;
  opt.amsgrad = options.amsgrad;
  opt.centered = options.centered;
  opt.initialAccumulatorValue = options.initialAccumulatorValue;
  if (options.weightDecay != -1)
    opt.weightDecay = options.weightDecay;
  opt.clipnorm = options.clipnorm;
  opt.clipvalue = options.clipvalue;
  opt.globalClipnorm = options.globalClipnorm;
  if (!options.lrSchedule.empty()) {
    llvm::Expected<LearningRateSchedule> schedule =
        LearningRateSchedule::parse(options.lrSchedule);
    if (!schedule)
      return schedule.takeError();
    opt.schedule = std::move(*schedule);
  }
  if (llvm::Error err = config.validate())
    return err;
  return config;
}

void buildImportPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // On the forward alone: in a training step relu's output has the
  // gradient as a second user and stays where it is.
  pm.addPass(createKcPoolBeforeActivation());
}

void buildTrainPipeline(mlir::OpPassManager &pm, const TrainingConfig &config) {
  // The pass copies its options: the storage may go after this call.
  std::vector<std::string> outputs;
  addTrainPipeline(pm,
                   createKcBuildTrainStep(toTrainStepOptions(config, outputs)));
}

void registerPasses() {
  registerKcPasses();
  mlir::PassPipelineRegistration<>(
      "kc-import-pipeline",
      "Canonicalize and CSE a traced or imported kc module",
      buildImportPipeline);
  // kc-train-pipeline takes kc-build-train-step's own options, parsed by the
  // pass, so the two never disagree on a name or a default.
  mlir::registerPassPipeline(
      "kc-train-pipeline",
      "Import clean-up, kc-build-train-step (whose options it takes), then "
      "canonicalize and CSE",
      [](mlir::OpPassManager &pm, llvm::StringRef options,
         llvm::function_ref<mlir::LogicalResult(const llvm::Twine &)>
             errorHandler) {
        std::unique_ptr<mlir::Pass> trainStep = createKcBuildTrainStep();
        if (mlir::failed(trainStep->initializeOptions(options, errorHandler)))
          return mlir::failure();
        addTrainPipeline(pm, std::move(trainStep));
        return mlir::success();
      },
      [](llvm::function_ref<void(const mlir::detail::PassOptions &)>) {});
}

} // namespace kcc
