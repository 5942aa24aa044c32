//===- LayerRegistry.h - Every Keras layer class kcc reads ------*- C++ -*-===//
//
// One entry per Keras layer class: its name, its family (the folder of
// keras/src/layers it comes from, and the file of frontend/keras/layers/
// that reads it), how its config is read (errors at the JSON path of the
// field), what its saved config holds beyond the layer's own
// kerasConfig() (the keys Keras writes as null or with the one value kcc
// supports), and one line of documentation. The importer, the `.keras`
// writer, the error that lists the supported classes, `kcc --list-layers`
// and the table in docs/frontend.md all come from this table: adding a
// layer is one entry, its layer implementation and its tests.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_LAYERREGISTRY_H
#define KCC_FRONTEND_KERAS_LAYERREGISTRY_H

#include "frontend/keras/LayerSpecs.h"

#include "llvm/Support/JSON.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace kcc {
namespace keras {

struct LayerClass {
  /// Keras's class_name.
  std::string name;
  /// keras/src/layers/<family>: core, activations, convolutional, pooling,
  /// normalization, regularization, reshaping, merging, rnn, attention,
  /// preprocessing; applications for keras.applications' own classes.
  std::string family;
  /// Builds the layer from its config; null for InputLayer, which the
  /// model readers handle.
  std::function<Layer(const ObjectView &config, const CallOptions &call)> read;
  /// get_config() keys Keras writes as null and kcc's layer leaves out
  /// (regularizers and constraints it has none of).
  std::vector<std::string> nullKeys;
  /// get_config() keys with the one value kcc supports
  /// ({"data_format", "channels_last"}).
  std::vector<std::pair<std::string, llvm::json::Value>> fixedKeys;
  /// What kcc reads of the config, in one line.
  std::string doc;
};

/// Every class, family by family, in each family's order (InputLayer
/// first).
const std::vector<LayerClass> &layerClasses();

/// The class named `name`, or null.
const LayerClass *findLayerClass(llvm::StringRef name);

/// "InputLayer, Dense, ... and Bidirectional": what kcc imports.
std::string supportedLayerList();

/// The table of docs/frontend.md (Markdown): class, family, what kcc reads.
std::string layerTableMarkdown();

/// Adds `cls`'s null and fixed keys to a saved layer config.
void addSavedKeys(const LayerClass &cls, llvm::json::Object &config);

// The families, one file each under frontend/keras/layers/.
void addCoreLayers(std::vector<LayerClass> &classes);
void addActivationLayers(std::vector<LayerClass> &classes);
void addConvolutionalLayers(std::vector<LayerClass> &classes);
void addPoolingLayers(std::vector<LayerClass> &classes);
void addNormalizationLayers(std::vector<LayerClass> &classes);
void addRegularizationLayers(std::vector<LayerClass> &classes);
void addReshapingLayers(std::vector<LayerClass> &classes);
void addMergingLayers(std::vector<LayerClass> &classes);
void addRecurrentLayers(std::vector<LayerClass> &classes);
void addAttentionLayers(std::vector<LayerClass> &classes);
void addPreprocessingLayers(std::vector<LayerClass> &classes);
/// The classes keras.applications networks define (ConvNeXt's).
void addApplicationLayers(std::vector<LayerClass> &classes);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_LAYERREGISTRY_H
