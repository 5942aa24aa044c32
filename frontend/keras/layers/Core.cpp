//===- Core.cpp - Keras's core layers ------------------------------------===//
//
// Dense, EinsumDense and Embedding (keras/src/layers/core/); InputLayer is
// listed here and read by the model readers (readInputLayer).
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

using namespace kcc;
using namespace kcc::keras;

namespace {

Layer buildDense(const ObjectView &c) {
  checkNull(c, {"kernel_constraint", "bias_constraint", "lora_rank"});
  int64_t units = readWidth(c, "units");
  return withRegularizers(
      c,
      Dense(units, readActivation(c), c.getBool("use_bias", true),
            readInitializer(c, "kernel_initializer", "glorot_uniform"),
            readInitializer(c, "bias_initializer", "zeros")),
      {"kernel", "bias"});
}

Layer buildEinsumDense(const ObjectView &c) {
  checkNull(c, {"kernel_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "bias_constraint",
                "lora_rank", "quantization_config"});
  Shape outputShape = readIntOrShape(c, "output_shape");
  if (outputShape.empty())
    c.failField("output_shape", "missing required field 'output_shape'");
  return EinsumDense(c.getString("equation"), outputShape,
                     c.getString("bias_axes", ""), readActivation(c),
                     readInitializer(c, "kernel_initializer", "glorot_uniform"),
                     readInitializer(c, "bias_initializer", "zeros"));
}

Layer buildEmbedding(const ObjectView &c) {
  checkNull(c, {"embeddings_constraint", "lora_rank"});
  if (c.has("weights"))
    c.failField("weights", "'weights' in the config is not supported");
  return withRegularizers(
      c,
      Embedding(readWidth(c, "input_dim"), readWidth(c, "output_dim"),
                readInitializer(c, "embeddings_initializer", "uniform"),
                c.getBool("mask_zero", false)),
      {"embeddings"});
}

Layer buildMasking(const ObjectView &c) {
  return Masking(c.getNumber("mask_value", 0.0));
}

} // namespace

void keras::addCoreLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"InputLayer",
                     "core",
                     nullptr,
                     {},
                     {},
                     "`batch_shape` (Keras 3), `batch_input_shape` (Keras 2) "
                     "or `shape`; dtype float32, int32 or int64"});
  classes.push_back(
      {"Dense",
       "core",
       [](const ObjectView &c, const CallOptions &) { return buildDense(c); },
       {"kernel_regularizer", "bias_regularizer", "kernel_constraint",
        "bias_constraint", "quantization_config"},
       {},
       "`units`, `activation`, `use_bias`, initializers, kernel, bias and "
       "activity regularizers"});
  classes.push_back(
      {"EinsumDense",
       "core",
       [](const ObjectView &c, const CallOptions &) {
         return buildEinsumDense(c);
       },
       {"kernel_regularizer", "bias_regularizer", "activity_regularizer",
        "kernel_constraint", "bias_constraint", "lora_rank"},
       {},
       "`equation`, `output_shape`, `bias_axes`, `activation`, initializers"});
  classes.push_back({"Embedding",
                     "core",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildEmbedding(c);
                     },
                     {"embeddings_regularizer", "activity_regularizer",
                      "embeddings_constraint"},
                     {},
                     "`input_dim`, `output_dim`, `embeddings_initializer`, "
                     "regularizers, `mask_zero` (id 0 masks its step); int32 "
                     "or int64 ids"});
  classes.push_back(
      {"Masking",
       "core",
       [](const ObjectView &c, const CallOptions &) { return buildMasking(c); },
       {},
       {},
       "`mask_value` (a number): steps equal to it are zeroed "
       "and masked"});
  classes.push_back({"Identity",
                     "core",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Identity());
                     },
                     {},
                     {},
                     "no arguments"});
}
