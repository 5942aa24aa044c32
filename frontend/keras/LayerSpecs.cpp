//===- LayerSpecs.cpp - Keras layer configs to kcc layers -----------------===//
//
// Keras 2 and Keras 3 write the same config keys for the layers kcc has, so
// one reader per class serves both: the layer registry's
// (LayerRegistry.h), one family per file under layers/. Here: what every
// entry shares (built-in checks, the dtype, the layer's name and
// trainable flag) and the InputLayer.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/LayerSpecs.h"
#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"
#include "runtime/MemoryBudget.h"

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

std::string keras::layerContext(const std::string &name,
                                const std::string &cls) {
  return "layer '" + name + "' (" + cls + ")";
}

void keras::checkBuiltin(const ObjectView &entry,
                         const std::string &className) {
  if (const json::Value *r = entry.get("registered_name")) {
    std::optional<llvm::StringRef> s = r->getAsString();
    if (!s || *s != className)
      entry.failField("registered_name",
                      "custom object '" + (s ? s->str() : std::string("?")) +
                          "' cannot be imported: kcc only knows Keras's "
                          "built-in layers");
  }
  if (const json::Value *m = entry.get("module")) {
    std::optional<llvm::StringRef> s = m->getAsString();
    if (!s || !(*s == "keras" || s->starts_with("keras.")))
      entry.failField("module", "custom object from module '" +
                                    (s ? s->str() : std::string("?")) +
                                    "' cannot be imported: kcc only knows "
                                    "Keras's built-in layers");
  }
}

std::string keras::sublayerGroup(llvm::StringRef layerClass,
                                 llvm::StringRef sublayer) {
  // A recurrent layer's cell, the cells of a Bidirectional's two layers,
  // and what a TimeDistributed wraps are stored at these paths.
  if (sublayer == "cell" || sublayer == "layer" || sublayer.contains('/'))
    return sublayer.str();
  std::string dense = sublayer == "attention_output"
                          ? std::string("output_dense")
                          : (sublayer + "_dense").str();
  // Keras saves a sublayer under its attribute's name, with the
  // underscore of a private one: MultiHeadAttention's gate and every
  // projection of GroupQueryAttention are private.
  if (layerClass == "GroupQueryAttention" || sublayer == "gate")
    return "_" + dense;
  return dense;
}

std::optional<Shape> keras::readBatchInputShape(const ObjectView &config) {
  if (!config.has("batch_input_shape"))
    return std::nullopt;
  Shape s = config.getShape("batch_input_shape");
  if (s.empty())
    config.failField("batch_input_shape", "must include the batch dimension");
  return Shape(s.begin() + 1, s.end());
}

InputSpec keras::readInputLayer(const ObjectView &config) {
  InputSpec in;
  in.name = config.getString("name", "input_layer");
  // Keras 3: batch_shape (or shape, batch excluded); Keras 2:
  // batch_input_shape.
  Shape batched;
  if (config.has("batch_shape")) {
    batched = config.getShape("batch_shape");
  } else if (config.has("batch_input_shape")) {
    batched = config.getShape("batch_input_shape");
  } else if (config.has("shape")) {
    batched = config.getShape("shape");
    batched.insert(batched.begin(), -1);
  } else {
    config.failField("batch_shape", "missing required field 'batch_shape'");
  }
  if (batched.empty())
    config.fail("the input shape must include the batch dimension");
  in.shape.assign(batched.begin() + 1, batched.end());
  for (int64_t d : in.shape)
    if (d <= 0)
      config.fail("input shape " + shapeToString(in.shape) +
                  " must be static (only the batch dimension may be None)");
  if (config.getBool("sparse", false) || config.getBool("ragged", false))
    config.fail("sparse and ragged inputs are not supported");
  in.dtype = readInputDType(config);
  // One example must be a tensor kcc can hold; the batch is checked when
  // the model is traced.
  Shape example{1};
  example.insert(example.end(), in.shape.begin(), in.shape.end());
  if (TensorSize size =
          tensorSize(example, dtypeSize(in.dtype), dtypeName(in.dtype));
      !size)
    config.fail("input shape " + shapeToString(in.shape) +
                " is too large: one example, " + size.error);
  return in;
}

BuiltLayer keras::buildLayer(const ObjectView &c, const std::string &cls,
                             const std::string &name, const CallOptions &call) {
  if (cls == "Lambda")
    c.fail("Lambda layers hold Python code, which kcc cannot run; write "
           "the function as a layer class, registered in Python with "
           "keras.saving.register_keras_serializable and in C++ with "
           "kcc::keras::registerLayerClass (examples/embed/custom_layer.cpp)");
  std::string policy = readDTypePolicy(c);
  const LayerClass *entry = findLayerClass(cls);
  if (!entry || !entry->read)
    c.fail("layer class '" + cls + "' is not supported (kcc imports " +
           supportedLayerList() + ")");
  std::optional<Layer> layer;
  try {
    layer = entry->read(c, call);
  } catch (const Error &e) {
    // The layer API's own checks, located at this config.
    std::string msg = e.what();
    if (msg.find(c.reader().source()) == 0)
      throw;
    c.fail(msg);
  }
  if (!name.empty())
    layer->named(name);
  if (policy != "float32")
    layer->withDTypePolicy(policy);
  return {*layer, c.getBool("trainable", true)};
}
