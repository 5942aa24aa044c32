//===- LayerSpecs.h - Keras layer configs to kcc layers ---------*- C++ -*-===//
//
// One function per concern: checking that an entry is a built-in Keras
// object, reading an InputLayer, and turning a layer config into the kcc
// layer with the same semantics (or an error naming the field kcc cannot
// honour). Used by the model readers in ModelSpec.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_KERAS_LAYERSPECS_H
#define KCC_FRONTEND_KERAS_LAYERSPECS_H

#include "frontend/keras/SpecReader.h"

#include <optional>

namespace kcc {
namespace keras {

/// Rejects custom objects: a non-null registered_name naming something
/// else than the class, or a module outside Keras.
void checkBuiltin(const ObjectView &entry, const std::string &className);

/// "layer 'dense_1' (Dense)", the context of a layer's messages.
std::string layerContext(const std::string &name, const std::string &cls);

/// A model input read from an InputLayer config.
struct InputSpec {
  Shape shape; ///< Batch excluded.
  DType dtype = DType::F32;
  std::string name;
};
InputSpec readInputLayer(const ObjectView &config);

/// The batch-excluded input shape of a Keras 2 Sequential's first layer
/// (batch_input_shape in its config), if given.
std::optional<Shape> readBatchInputShape(const ObjectView &config);

/// A kcc layer built from `config` (the entry's "config" object) of class
/// `className`, named `name` (unless empty). Throws for unsupported classes and
/// values.
struct BuiltLayer {
  Layer layer;
  bool trainable = true;
};
/// What the calls of a layer (its inbound nodes' kwargs) set that kcc
/// fixes per layer.
struct CallOptions {
  bool useCausalMask = false; ///< MultiHeadAttention
  /// A keras.src.ops node's number argument (x + 3.0, x * (1 / 6)), and
  /// whether it comes first (3.0 - x).
  std::optional<double> scalarOperand;
  bool scalarFirst = false;
};
BuiltLayer buildLayer(const ObjectView &config, const std::string &className,
                      const std::string &name, const CallOptions &call = {});

/// The h5 group under a layer's group holding the weights named
/// "SUBLAYER/..." (MultiHeadAttention's "query/kernel"): Keras names it by
/// the sublayer's attribute (query_dense, ..., output_dense; _gate_dense,
/// GroupQueryAttention's _query_dense, ...).
std::string sublayerGroup(llvm::StringRef layerClass, llvm::StringRef sublayer);

} // namespace keras
} // namespace kcc

#endif // KCC_FRONTEND_KERAS_LAYERSPECS_H
