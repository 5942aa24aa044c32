//===- ModelLoader.cpp - The model a kcc command works on -----------------===//

#include "ModelLoader.h"
#include "Options.h"

#include "frontend/keras/KerasImporter.h"
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
    // The reference models are classifiers compiled, as in Keras's
    // tutorials, with metrics=["accuracy"].
    if (!source.builtin.empty())
      loaded.training.metrics = {"accuracy"};
    if (source.builtin == "mlp") {
      loaded.model = models::buildMlp(source.seed);
      loaded.training.loss.fromLogits = false; // it ends in softmax
    } else if (source.builtin == "cnn") {
      loaded.model = models::buildCnn(source.seed);
      loaded.training.loss.fromLogits = true;
    } else if (source.builtin == "residual") {
      loaded.model = models::buildResidual(source.seed);
      loaded.training.loss.fromLogits = true;
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
      loaded =
          loadedFromImport(keras::importFile(source.input, source.seed), "");
    }
    if (!source.dtypePolicy.empty())
      loaded.model->setDTypePolicy(source.dtypePolicy);
  } catch (const Error &e) {
    return makeError(e.what());
  }
  loaded.name = source.builtin.empty()
                    ? llvm::sys::path::stem(source.input).str()
                    : source.builtin;
  return loaded;
}

LoadedModel driver::loadedFromImport(keras::ImportedModel imported,
                                     const std::string &name) {
  LoadedModel loaded;
  loaded.model = std::move(imported.model);
  if (imported.training)
    loaded.training = *imported.training;
  loaded.trainingError = imported.trainingError;
  loaded.name = name;
  loaded.imported = std::move(imported);
  return loaded;
}

llvm::Expected<TrainingConfig>
driver::resolveTrainingConfig(const LoadedModel &model,
                              const ModelSource &source,
                              llvm::ArrayRef<std::string> defaultMetrics) {
  // --loss replaces a custom loss of a model with one output.
  bool lossReplaced = model.imported &&
                      model.imported->trainingErrorIsCustomLoss &&
                      model.training.outputs.empty() && lossFlagGiven();
  if (!model.trainingError.empty() && !lossReplaced)
    return makeError(model.trainingError);
  TrainingConfig config = model.training;
  config.batch = source.batch;
  if (config.metrics.empty())
    config.metrics.assign(defaultMetrics.begin(), defaultMetrics.end());
  llvm::Error err = applyTrainingFlags(config);
  if (!err)
    err = config.validate();
  if (err)
    return makeError("compile: " + llvm::toString(std::move(err)));
  return config;
}
