//===- ModelLoader.cpp - The model a kcc command works on -----------------===//

#include "ModelLoader.h"

#include "frontend/models/ReferenceModels.h"
#include "runtime/Error.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace kcc;
using namespace kcc::driver;

namespace {
llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

bool driver::isMlirInput(const ModelSource &source) {
  return source.builtin.empty() &&
         (source.input == "-" ||
          llvm::sys::path::extension(source.input) == ".mlir");
}

llvm::Expected<LoadedModel> driver::loadModel(const ModelSource &source) {
  LoadedModel loaded;
  if (!source.builtin.empty() && !source.input.empty())
    return makeError("give either a model file or --model, not both");
  try {
    if (source.builtin == "mlp") {
      loaded.model = models::buildMlp(source.seed);
      loaded.fromLogits = false; // it ends in softmax
    } else if (source.builtin == "cnn") {
      loaded.model = models::buildCnn(source.seed);
      loaded.fromLogits = true;
    } else if (source.builtin == "residual") {
      loaded.model = models::buildResidual(source.seed);
      loaded.fromLogits = true;
    } else if (!source.builtin.empty()) {
      return makeError("unknown --model '" + source.builtin +
                       "' (expected mlp, cnn or residual)");
    } else if (source.input.empty()) {
      return makeError("no model: give a Keras spec (.json, .keras, .h5) or "
                       "--model=mlp|cnn|residual");
    } else {
      if (!llvm::sys::fs::exists(source.input))
        return makeError("cannot open input file '" + source.input +
                         "': No such file or directory");
      keras::ImportedModel imported =
          keras::importFile(source.input, source.seed);
      loaded.model = std::move(imported.model);
      loaded.compile = std::move(imported.compile);
    }
  } catch (const Error &e) {
    return makeError(e.what());
  }
  loaded.name = source.builtin.empty()
                    ? llvm::sys::path::stem(source.input).str()
                    : source.builtin;
  return loaded;
}

llvm::Expected<JitOptions>
driver::resolveTrainOptions(const TrainFlags &flags, const LoadedModel *model,
                            const ModelSource &source,
                            const std::vector<std::string> &defaultMetrics) {
  JitOptions o;
  o.batch = source.batch;
  const keras::CompileConfig *spec =
      model && model->compile ? &*model->compile : nullptr;
  if (spec) {
    const keras::OptimizerConfig &opt = spec->optimizer;
    o.optimizer = opt.name;
    o.learningRate = opt.learningRate;
    o.beta1 = opt.beta1;
    o.beta2 = opt.beta2;
    o.epsilon = opt.epsilon;
    o.momentum = opt.momentum;
    o.rho = opt.rho;
    o.nesterov = opt.nesterov;
    if (!spec->loss.empty())
      o.loss = spec->loss;
    o.fromLogits = spec->fromLogits;
    o.metrics = spec->metrics;
  } else if (model && model->fromLogits) {
    o.fromLogits = *model->fromLogits;
  }
  if (!spec || spec->metrics.empty())
    o.metrics = defaultMetrics;
  if (flags.loss)
    o.loss = *flags.loss;
  if (flags.optimizer)
    o.optimizer = *flags.optimizer;
  if (flags.fromLogits)
    o.fromLogits = *flags.fromLogits;
  if (flags.metrics)
    o.metrics = *flags.metrics;
  if (flags.learningRate)
    o.learningRate = *flags.learningRate;
  try {
    validateJitOptions(o);
  } catch (const Error &e) {
    return makeError(e.what());
  }
  return o;
}
