//===- ModelLoader.h - The model a kcc command works on ---------*- C++ -*-===//
//
// kcc's inputs: a Keras spec (.json, .keras, .h5: frontend/keras), one of
// the reference models (--model=mlp|cnn|residual: frontend/models), or, for
// the compile command only, a .mlir file holding @forward with kc.name /
// kc.trainable / kc.input argument attributes. The training configuration
// is layered here too: Keras's defaults, then the spec's compile_config or
// the reference model's own from_logits (the CNN and the residual net output
// logits), then the command line.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_MODELLOADER_H
#define KCC_TOOLS_KCC_MODELLOADER_H

#include "Options.h"

#include "config/TrainingConfig.h"
#include "frontend/Model.h"
#include "frontend/keras/KerasImporter.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace kcc {
namespace driver {

struct LoadedModel {
  std::unique_ptr<Model> model;
  /// Keras's defaults, overridden by the spec's compile_config or by a
  /// reference model's own from_logits.
  TrainingConfig training;
  /// The spec's deferred error (keras::ImportedModel::trainingError).
  std::string trainingError;
  /// "mlp", or the file name: what diagnostics and headers call it.
  std::string name;
  /// For a Keras file: what the importer read besides the model (its
  /// `model` moved into `model` above), so that saving keeps the original
  /// config (docs/saving.md). Absent for the reference models.
  std::optional<keras::ImportedModel> imported;
};

/// The LoadedModel of an imported model (a file or a checkpoint).
LoadedModel loadedFromImport(keras::ImportedModel imported,
                             const std::string &name);

/// Whether `source` names a .mlir file (or stdin) rather than a model.
bool isMlirInput(const ModelSource &source);

/// Builds the frontend model of `source` (not a .mlir input). Errors name
/// the file and what is wrong with it.
llvm::Expected<LoadedModel> loadModel(const ModelSource &source);

/// `model`'s training configuration at `source.batch` (for a .mlir input,
/// `model` holds Keras's defaults), with `defaultMetrics` when it names no
/// metrics and the command-line flags on top, validated. Fails with the
/// spec's deferred error first, if it has one.
llvm::Expected<TrainingConfig>
resolveTrainingConfig(const LoadedModel &model, const ModelSource &source,
                      llvm::ArrayRef<std::string> defaultMetrics);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_MODELLOADER_H
