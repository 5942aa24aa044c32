//===- ModelLoader.h - The model a kcc command works on ---------*- C++ -*-===//
//
// kcc's inputs: a Keras spec (.json, .keras, .h5: frontend/keras), one of
// the reference models (--model=mlp|cnn|residual: examples/models), or, for
// the compile command only, a .mlir file holding @forward with kc.name /
// kc.trainable / kc.input argument attributes. The train-step settings are
// resolved here too: the command line wins, then the spec's compile_config,
// then the model's own default (the reference CNN and residual net output
// logits), then Keras's defaults.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_MODELLOADER_H
#define KCC_TOOLS_KCC_MODELLOADER_H

#include "Options.h"

#include "frontend/Model.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Jit.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace kcc {
namespace driver {

struct LoadedModel {
  std::unique_ptr<Model> model;
  /// The spec's compile_config, if it had one.
  std::optional<keras::CompileConfig> compile;
  /// The model's own from_logits default (reference models).
  std::optional<bool> fromLogits;
  /// "mlp", or the file name: what diagnostics and headers call it.
  std::string name;
};

/// Whether `source` names a .mlir file (or stdin) rather than a model.
bool isMlirInput(const ModelSource &source);

/// Builds the frontend model of `source` (not a .mlir input). Errors name
/// the file and what is wrong with it.
llvm::Expected<LoadedModel> loadModel(const ModelSource &source);

/// The train-step settings for `model` (null for a .mlir input) at
/// `source.batch`; `defaultMetrics` applies when neither the command line
/// nor the spec names metrics. Validated: an unknown loss, optimizer or
/// metric is an error.
llvm::Expected<JitOptions>
resolveTrainOptions(const TrainFlags &flags, const LoadedModel *model,
                    const ModelSource &source,
                    const std::vector<std::string> &defaultMetrics);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_MODELLOADER_H
