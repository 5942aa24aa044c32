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
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kcc {
namespace keras {

struct LayerClass {
  using Reader =
      std::function<Layer(const ObjectView &config, const CallOptions &call)>;

  LayerClass() = default;
  // Not explicit: the family files list their classes as braced lists.
  LayerClass(
      std::string name, std::string family, Reader read, // NOLINT
      std::vector<std::string> nullKeys = {},
      std::vector<std::pair<std::string, llvm::json::Value>> fixedKeys = {},
      std::string doc = {}, std::optional<std::string> module = "keras.layers",
      std::optional<std::string> registeredName = std::nullopt)
      : name(std::move(name)), family(std::move(family)), read(std::move(read)),
        nullKeys(std::move(nullKeys)), fixedKeys(std::move(fixedKeys)),
        doc(std::move(doc)), module(std::move(module)),
        registeredName(std::move(registeredName)) {}

  /// Keras's class_name.
  std::string name;
  /// keras/src/layers/<family>: core, activations, convolutional, pooling,
  /// normalization, regularization, reshaping, merging, rnn, attention,
  /// preprocessing; applications for keras.applications' own classes.
  std::string family;
  /// Builds the layer from its config; null for InputLayer, which the
  /// model readers handle.
  Reader read;
  /// get_config() keys Keras writes as null and kcc's layer leaves out
  /// (regularizers and constraints it has none of).
  std::vector<std::string> nullKeys;
  /// get_config() keys with the one value kcc supports
  /// ({"data_format", "channels_last"}).
  std::vector<std::pair<std::string, llvm::json::Value>> fixedKeys;
  /// What kcc reads of the config, in one line.
  std::string doc;
  /// The module and registered_name a saved config names the class by:
  /// Keras's layers are "keras.layers" with no registered name; a class a
  /// package registers (keras.saving.register_keras_serializable) has its
  /// own ("demo>ScaledDense", module null).
  std::optional<std::string> module = "keras.layers";
  std::optional<std::string> registeredName;
  /// Base keys (name, trainable, dtype) the class's own get_config leaves
  /// out and its constructor refuses (Discretization's `trainable`).
  std::vector<std::string> omittedKeys;
};

/// Adds a C++ implementation of a user's Keras layer class, registered in
/// Python with keras.saving.register_keras_serializable: a saved config
/// whose registered_name is `cls.registeredName` ("package>ClassName") is
/// read with `cls.read`, and a layer whose className() is `cls.name` saves
/// under that registered name. The layer is traced and differentiated as
/// any other (examples/embed/custom_layer.cpp). Throws kcc::Error when the
/// registered name is missing or taken. Register before importing.
void registerLayerClass(LayerClass cls);
/// The class registered under `registeredName` (registerLayerClass), or
/// null.
const LayerClass *findRegisteredLayerClass(llvm::StringRef registeredName);

/// Every class, family by family, in each family's order (InputLayer
/// first).
const std::vector<LayerClass> &layerClasses();

/// The class named `name`: one of Keras's, else a registered class by its
/// registered name or its class name; null when there is none.
const LayerClass *findLayerClass(llvm::StringRef name);

/// "InputLayer, Dense, ... and Bidirectional": what kcc imports.
std::string supportedLayerList();

/// The table of docs/frontend.md (Markdown): class, family, what kcc reads.
std::string layerTableMarkdown();

/// Adds `cls`'s null and fixed keys to a saved layer config and drops its
/// omitted ones.
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
