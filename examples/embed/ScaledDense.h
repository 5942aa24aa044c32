//===- ScaledDense.h - A user's Keras layer class, in C++ -------*- C++ -*-===//
//
// A Keras model may hold a layer class of its author's own, registered in
// Python with @keras.saving.register_keras_serializable(package="demo"):
//
//   class ScaledDense(keras.layers.Layer):    # tanh(x @ kernel + bias) * scale
//       def build(self, input_shape):
//           self.kernel = self.add_weight((input_shape[-1], self.units),
//                                         initializer="glorot_uniform")
//           self.bias = self.add_weight((self.units,), initializer="zeros")
//           self.scale = self.add_weight((self.units,), initializer="ones")
//       def call(self, x):
//           return ops.tanh(ops.matmul(x, self.kernel) + self.bias) *
//           self.scale
//
// kcc cannot run the Python, so the program supplies the same layer in C++:
// a kcc::LayerImpl declaring the weights in Keras's order (the archive's
// vars/0, 1, 2) and computing the call with kcc's ops, which kcc traces and
// differentiates like its own layers; and registerScaledDense() registers it
// under the same name, so importing the archive builds it and saving writes
// it back for Keras. scripts/keras-fixtures/make_custom_layer_fixtures.py
// writes such a model.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_EXAMPLES_EMBED_SCALEDDENSE_H
#define KCC_EXAMPLES_EMBED_SCALEDDENSE_H

#include "frontend/keras/LayerRegistry.h"
#include "kcc/kcc.h"

#include <memory>
#include <string>

namespace demo {

class ScaledDenseImpl : public kcc::LayerImpl {
public:
  explicit ScaledDenseImpl(int64_t units)
      : LayerImpl("ScaledDense"), units_(units) {}

  /// get_config()'s own keys: what saving writes and Keras reads back.
  llvm::json::Object kerasConfig() const override {
    return llvm::json::Object{{"units", units_}};
  }

protected:
  void build(const std::vector<kcc::Shape> &shapes) override {
    if (shapes.size() != 1 || shapes[0].size() != 2)
      fail("expects one input of shape [batch, features], got " +
           (shapes.empty() ? std::string("none") : shapeString(shapes[0])));
    addWeight("kernel", {shapes[0][1], units_}, "glorot_uniform");
    addWeight("bias", {units_}, "zeros");
    addWeight("scale", {units_}, "ones");
  }

  std::vector<kcc::Tensor> forward(const std::vector<kcc::Tensor> &inputs,
                                   const kcc::CallContext &) override {
    expectInputs(inputs, 1);
    namespace ops = kcc::ops;
    kcc::Tensor h =
        ops::tanh(ops::add(ops::matmul(inputs[0], weight(0)), weight(1)));
    return {ops::mul(h, weight(2))};
  }

private:
  int64_t units_;
};

inline kcc::Layer ScaledDense(int64_t units) {
  return kcc::Layer(std::make_shared<ScaledDenseImpl>(units));
}

/// Registers ScaledDense under Keras's registered name "demo>ScaledDense";
/// its config's `units` is read with the located errors kcc's own layers
/// give. Call once, before importing.
inline void registerScaledDense() {
  kcc::keras::LayerClass cls;
  cls.name = "ScaledDense";
  cls.registeredName = "demo>ScaledDense";
  cls.module = std::nullopt; // Keras writes null for a registered class
  cls.doc = "demo's tanh(x @ kernel + bias) * scale: `units`";
  cls.read = [](const kcc::keras::ObjectView &config,
                const kcc::keras::CallOptions &) {
    double units = config.getNumber("units");
    if (!(units >= 1 && units == static_cast<int64_t>(units)))
      config.failField("units", "'units' must be a positive integer");
    return ScaledDense(static_cast<int64_t>(units));
  };
  kcc::keras::registerLayerClass(std::move(cls));
}

} // namespace demo

#endif // KCC_EXAMPLES_EMBED_SCALEDDENSE_H
