//===- KerasImporter.h - Keras model specs into kcc models ------*- C++ -*-===//
//
// Reads what Keras writes -- model.to_json() of Keras 3 and of Keras 2
// (tf.keras), .keras archives and legacy .h5 files -- and rebuilds the model
// through kcc's C++ layer API (kcc::Sequential, kcc::Input, kcc::Dense, ...).
// A spec and the same model written in C++ therefore trace to identical IR:
// the importer is only another user of the layer API.
//
//   auto imported = kcc::keras::importFile("mlp.keras");
//   kcc::Model &model = *imported.model;        // weights loaded
//   auto module = kcc::traceForward(ctx, model);
//
// Every problem is a kcc::Error naming the file, where in it (a JSON path
// such as $.config.layers[2].config.units, or line:col for malformed JSON, or
// the HDF5 dataset) and the layer:
//
//   mlp.json: $.config.layers[2].config.units: layer 'dense' (Dense):
//   missing required field 'units'
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_KERASIMPORTER_H
#define KCC_FRONTEND_KERAS_KERASIMPORTER_H

#include "config/TrainingConfig.h"
#include "frontend/Model.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace keras {

/// A layer as Keras's model.layers lists it (InputLayers left out): a kcc
/// layer, or a model used as a layer with its own model.layers. Keras 3
/// stores weights along this tree (layers/functional/layers/dense/vars).
struct SpecLayer {
  /// The kcc layer's name, or the nested model's.
  std::string name;
  /// "Dense"; "Sequential" or "Functional" for a nested model.
  std::string className;
  /// A nested model's layers (empty for a layer).
  std::vector<SpecLayer> layers;
  /// False for a config entry no output depends on (the keras.ops nodes
  /// that computed a mask kcc derives itself): it has no kcc layer and no
  /// weights, but keeps its place in the archive's weight groups.
  bool built = true;
  bool isModel() const;
};

/// Whether a config.layers entry of class `cls` is a model used as a
/// layer: Sequential, Functional, Model, and Keras's Pipeline layer (a
/// list of layers applied in turn, its config and weights laid out as a
/// nested Sequential's).
inline bool isModelClass(llvm::StringRef cls) {
  return cls == "Sequential" || cls == "Functional" || cls == "Model" ||
         cls == "Pipeline";
}

inline bool SpecLayer::isModel() const { return isModelClass(className); }

/// What an import returns.
struct ImportedModel {
  /// A kcc::Sequential for Sequential specs, a functional kcc::Model
  /// otherwise; layers carry the spec's names.
  std::unique_ptr<Model> model;
  /// Present when the spec held a compile_config (training_config in
  /// legacy .h5 files): Keras's defaults overridden by what it records.
  std::optional<TrainingConfig> training;
  /// Set when that compile_config names an optimizer or a loss kcc cannot
  /// train with ("<file>: <JSON path>: ... unknown optimizer 'adamw' ..."):
  /// the model still imports (it can be compiled for inference), and this
  /// is the error to report when a training step is requested.
  std::string trainingError;
  /// trainingError is a custom loss's (Python code kcc cannot run): a
  /// built-in loss given in its place (kcc's --loss) lifts it.
  bool trainingErrorIsCustomLoss = false;
  /// 2 for tf.keras specs, 3 for Keras 3.
  int kerasMajorVersion = 3;
  /// "3.15.1" when the spec or archive says so, else empty.
  std::string kerasVersion;
  /// Non-input layer names in the spec's order (Keras's model.layers), the
  /// order .keras archives number layers in; a nested model's layers take
  /// its place (depth first, a shared layer once), the order of Keras's
  /// model.trainable_variables.
  std::vector<std::string> specLayerOrder;
  /// The same layers as Keras nests them: the tree of weight groups.
  std::vector<SpecLayer> specLayers;
  /// The spec's JSON text as read (a to_json() text, a .keras archive's
  /// config.json, an .h5's model_config): what saving a Keras 3 model
  /// writes back, changed only where kcc changed it (keras/Saving.h).
  std::string configJson;
  /// Whether the weights came from the file (else they are the layers'
  /// initializers under `seed`).
  bool weightsLoaded = false;
};

/// Builds the model described by a Keras to_json() text (Keras 2 or 3) or a
/// .keras archive's config.json. `sourceName` names the text in errors.
/// Weights are drawn from the layers' initializers under `seed`.
ImportedModel importModelJson(llvm::StringRef text,
                              llvm::StringRef sourceName = "<json>",
                              uint64_t seed = 0);

/// Reads a Keras 3 .keras archive (zip of config.json, metadata.json and
/// model.weights.h5): the model and its weights.
ImportedModel importKerasArchive(const std::string &path, uint64_t seed = 0);

/// Reads a legacy HDF5 model file (model.save("x.h5"), Keras 2 or 3): the
/// model_config attribute, training_config and model_weights.
ImportedModel importKerasH5(const std::string &path, uint64_t seed = 0);

/// Dispatches on the content: a zip (.keras), HDF5 (.h5) or JSON text.
ImportedModel importFile(const std::string &path, uint64_t seed = 0);

/// Loads weights into an imported model from a Keras 3 model.weights.h5
/// (layers/<snake_case class>[_N]/vars/<i>) or a Keras 2 weights file
/// (layer_names / weight_names attributes) held in memory; `sourceName`
/// names it in errors. Shapes are checked per weight.
void loadWeightsH5(ImportedModel &imported, llvm::StringRef image,
                   llvm::StringRef sourceName);

/// The same, from a file on disk (.weights.h5 or legacy .h5).
void loadWeightsH5File(ImportedModel &imported, const std::string &path);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_KERASIMPORTER_H
