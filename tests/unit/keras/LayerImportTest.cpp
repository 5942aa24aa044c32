//===- LayerImportTest.cpp - activation, merge and image layers -----------===//
//
// The layers of make_layer_fixtures.py's archives, and their Keras 2
// spellings: an archive and the same model written with kcc's C++ API
// trace to the identical module; Keras 2's LeakyReLU(alpha) imports as
// Keras 3's negative_slope; values kcc cannot honour are errors naming
// the field.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/LayerRegistry.h"
#include "tests/unit/keras/KerasTestUtil.h"

using namespace kcc;
using namespace kcc::keras_test;
using ::testing::HasSubstr;
namespace json = llvm::json;

namespace {

std::string importError(const std::string &text) {
  return errorOf([&] { keras::importModelJson(text, "bad.json"); });
}

/// vision.keras as kcc's C++ API writes it, named as Keras named it.
std::unique_ptr<Model> visionInCpp() {
  Tensor x = Input({28, 28, 1});
  Tensor h = ZeroPadding2D(Sides2({1, 2}, {2, 1})).named("zero_padding2d")(x);
  h = Conv2D(16, 3, 1, "valid", "relu").named("conv2d")(h);
  h = Cropping2D(Sides2({1, 0}, {0, 1})).named("cropping2d")(h);
  Tensor p = MaxPooling2D(2).named("max_pooling2d")(h);
  Tensor u = UpSampling2D(Size2(2, 1)).named("up_sampling2d")(p);
  Tensor v = Conv2D(16, 3, 1, "same", "relu").named("conv2d_1")(u);
  Tensor w = Concatenate(2).named("concatenate")({v, u});
  w = ZeroPadding2D(1).named("zero_padding2d_1")(w);
  w = Cropping2D(2).named("cropping2d_1")(w);
  std::vector<Tensor> g = {
      GlobalAveragePooling2D().named("global_average_pooling2d")(w),
      GlobalMaxPooling2D().named("global_max_pooling2d")(w),
      Flatten().named("flatten")(
          GlobalAveragePooling2D(true).named("global_average_pooling2d_1")(w)),
      Flatten().named("flatten_1")(
          GlobalMaxPooling2D(true).named("global_max_pooling2d_1")(p)),
      Flatten().named("flatten_2")(MaxPooling2D(4).named("max_pooling2d_1")(
          UpSampling2D(1).named("up_sampling2d_1")(p)))};
  Tensor y = Dense(10).named("dense")(Concatenate().named("concatenate_1")(g));
  return std::make_unique<Model>(x, y, "vision");
}

TEST(KerasLayerImport, VisionArchiveTracesToTheCppModel) {
  keras::ImportedModel m = keras::importKerasArchive(fixture("vision.keras"));
  EXPECT_TRUE(m.weightsLoaded);
  std::string imported = traceText(*m.model);
  EXPECT_EQ(imported, traceText(*visionInCpp()));
  // Padding is a concat with zeros, cropping a slice, upsampling a
  // broadcast, global pooling a reduction: no op of their own.
  EXPECT_NE(imported.find("kc.concat"), std::string::npos);
  EXPECT_NE(imported.find("kc.slice"), std::string::npos);
  EXPECT_NE(imported.find("kc.broadcast_to"), std::string::npos);
  EXPECT_NE(imported.find("kc.reduce_max"), std::string::npos);
  EXPECT_NE(imported.find("kc.reduce_mean"), std::string::npos);
}

std::unique_ptr<Model> mobilenetInCpp() {
  int blocks = 0;
  // Keras's automatic names: layer, layer_1, layer_2, ...
  auto nth = [](const std::string &base, int i) {
    return i ? base + "_" + std::to_string(i) : base;
  };
  auto relu6 = [&](Tensor t) {
    return ReLU(6.0).named(nth("re_lu", blocks++))(t);
  };
  // Convolution (no bias), BatchNormalization, ReLU(6).
  auto block = [&](Layer conv, Tensor t) {
    t = BatchNormalization().named(nth("batch_normalization", blocks))(conv(t));
    return relu6(t);
  };
  const bool noBias = false;
  Tensor x = Input({28, 28, 1});
  Tensor h =
      block(Conv2D(16, 3, 2, "same", "linear", noBias).named("conv2d"), x);
  h = block(DepthwiseConv2D(3, 1, "same", 1, 1, "linear", noBias)
                .named("depthwise_conv2d"),
            h);
  h = block(Conv2D(32, 1, 1, "valid", "linear", noBias).named("conv2d_1"), h);
  h = block(DepthwiseConv2D(3, 2, "same", 2, 1, "linear", noBias)
                .named("depthwise_conv2d_1"),
            h);
  h = block(Conv2D(64, 1, 1, "valid", "linear", noBias).named("conv2d_2"), h);
  h = block(SeparableConv2D(64, 3, 1, "same", 1, 1, "linear", noBias)
                .named("separable_conv2d"),
            h);
  h = relu6(SeparableConv2D(64, 3, 2, "same").named("separable_conv2d_1")(h));
  Tensor y = Dense(10, "softmax")
                 .named("dense")(GlobalAveragePooling2D().named(
                     "global_average_pooling2d")(h));
  return std::make_unique<Model>(x, y, "mobilenet");
}

TEST(KerasLayerImport, MobileNetArchiveTracesToTheCppModel) {
  keras::ImportedModel m =
      keras::importKerasArchive(fixture("mobilenet.keras"));
  EXPECT_TRUE(m.weightsLoaded);
  std::string imported = traceText(*m.model);
  EXPECT_EQ(imported, traceText(*mobilenetInCpp()));
  // Depthwise is conv2d with groups = channels; no op of its own.
  EXPECT_NE(imported.find("groups = 16"), std::string::npos);
  EXPECT_NE(imported.find("groups = 32"), std::string::npos);
  EXPECT_NE(imported.find("groups = 64"), std::string::npos);
}

TEST(KerasLayerImport, Keras2ConvolutionVariantsImport) {
  // cnn_keras2.json's two Conv2D (32 and 64 filters, 3x3) as a
  // SeparableConv2D and a Conv2DTranspose: tf.keras 2 writes their keys as
  // Keras 3 does; the kernels take Keras's layouts.
  std::string text =
      replaceOnce(readText("cnn_keras2.json"), "\"class_name\": \"Conv2D\"",
                  "\"class_name\": \"SeparableConv2D\"");
  text = replaceOnce(text, "\"class_name\": \"Conv2D\"",
                     "\"class_name\": \"Conv2DTranspose\"");
  keras::ImportedModel m = keras::importModelJson(text, "cnn_keras2.json");
  std::vector<Shape> shapes;
  for (const Layer &layer : m.model->layers())
    for (const Weight &w : layer.impl()->weights())
      shapes.push_back(w.shape);
  ASSERT_GE(shapes.size(), 5u);
  EXPECT_EQ(shapes[0], (Shape{3, 3, 1, 1}));  // depthwise_kernel
  EXPECT_EQ(shapes[1], (Shape{1, 1, 1, 32})); // pointwise_kernel
  EXPECT_EQ(shapes[2], (Shape{32}));
  EXPECT_EQ(shapes[3], (Shape{3, 3, 64, 32})); // [kh, kw, out, in]
  EXPECT_EQ(shapes[4], (Shape{64}));
  // The transpose's (the second conv's) groups key as an output_padding.
  std::string padded = text;
  const std::string groups = "\"groups\": 1";
  padded.replace(padded.rfind(groups), groups.size(),
                 "\"output_padding\": [1, 1]");
  EXPECT_THAT(importError(padded),
              HasSubstr("(Conv2DTranspose): 'output_padding' is not "
                        "supported (must be null)"));
}

TEST(KerasLayerImport, ActivationAndMergeArchivesImportWithTheirWeights) {
  keras::ImportedModel a =
      keras::importKerasArchive(fixture("activations.keras"));
  EXPECT_TRUE(a.weightsLoaded);
  // PReLU's alpha is a trainable weight of the input's shape; shared_axes
  // [1] makes it [1].
  EXPECT_EQ(a.model->getLayer("p_re_lu").getWeights()[0].shape(), (Shape{8}));
  EXPECT_EQ(a.model->getLayer("p_re_lu_1").getWeights()[0].shape(), (Shape{1}));
  keras::ImportedModel m = keras::importKerasArchive(fixture("merging.keras"));
  EXPECT_TRUE(m.weightsLoaded);
  std::string text = traceText(*m.model);
  for (const char *op : {"kc.sub", "kc.mul", "kc.div", "kc.max", "kc.min"})
    EXPECT_NE(text.find(op), std::string::npos) << op;
}

/// mlp_keras2.json (tf.keras 2) with `layer` inserted after the first Dense.
std::string keras2MlpWith(json::Object layer) {
  json::Value spec = readJson("mlp_keras2.json");
  json::Array &layers =
      *spec.getAsObject()->getObject("config")->getArray("layers");
  layers.insert(layers.begin() + 3, json::Value(std::move(layer)));
  std::string text;
  llvm::raw_string_ostream os(text);
  os << spec;
  return text;
}

TEST(KerasLayerImport, Keras2LeakyReLUAlphaIsTheNegativeSlope) {
  std::string text = keras2MlpWith(
      json::Object{{"class_name", "LeakyReLU"},
                   {"config", json::Object{{"name", "leaky_re_lu"},
                                           {"trainable", true},
                                           {"dtype", "float32"},
                                           {"alpha", 0.125}}}});
  keras::ImportedModel m = keras::importModelJson(text, "keras2.json");
  EXPECT_EQ(m.kerasMajorVersion, 2);
  Sequential cpp({Input({28, 28, 1}), Flatten(), Dense(128, "relu"),
                  LeakyReLU(0.125), Dense(64, "relu"), Dense(10, "softmax")},
                 "mlp");
  EXPECT_EQ(traceText(*m.model), traceText(cpp));
  EXPECT_NE(traceText(cpp),
            traceText(*std::make_unique<Sequential>(
                std::vector<SequentialEntry>{
                    Input({28, 28, 1}), Flatten(), Dense(128, "relu"),
                    LeakyReLU(), Dense(64, "relu"), Dense(10, "softmax")},
                "mlp")));
}

TEST(KerasLayerImport, ValuesKccCannotHonourAreErrors) {
  // tf.keras 2's hard_sigmoid is another function than Keras 3's.
  std::string hard =
      replaceOnce(readText("mlp_keras2.json"), "\"activation\": \"relu\"",
                  "\"activation\": \"hard_sigmoid\"");
  EXPECT_THAT(importError(hard),
              HasSubstr("activation 'hard_sigmoid' of a Keras 2 spec is not "
                        "supported"));
  std::string bilinear = keras2MlpWith(json::Object{
      {"class_name", "UpSampling2D"},
      {"config", json::Object{{"name", "up"}, {"interpolation", "bilinear"}}}});
  EXPECT_THAT(importError(bilinear),
              HasSubstr("layer 'up' (UpSampling2D): interpolation 'bilinear' "
                        "is not supported (only nearest)"));
  std::string padding = keras2MlpWith(json::Object{
      {"class_name", "ZeroPadding2D"},
      {"config",
       json::Object{{"name", "pad"}, {"padding", json::Array{1, 2, 3}}}}});
  EXPECT_THAT(importError(padding),
              HasSubstr("config.padding: layer 'pad' (ZeroPadding2D): "
                        "'padding' must be an int, [h, w] or [[top, bottom], "
                        "[left, right]]"));
  std::string regularized = keras2MlpWith(json::Object{
      {"class_name", "PReLU"},
      {"config", json::Object{{"name", "p"}, {"alpha_regularizer", "l2"}}}});
  EXPECT_THAT(importError(regularized),
              HasSubstr("'alpha_regularizer' is not supported"));
  std::string negative = keras2MlpWith(json::Object{
      {"class_name", "ReLU"},
      {"config", json::Object{{"name", "r"}, {"threshold", -1.0}}}});
  EXPECT_THAT(importError(negative),
              HasSubstr("config.threshold: layer 'r' (ReLU): 'threshold' "
                        "must be a finite number >= 0"));
}

TEST(KerasLayerImport, Keras2BatchNormalizationFrozenWithAxisList) {
  // Keras 2 writes the built axis as a list; trainable false freezes the
  // layer (no trainable weight, inference mode).
  std::string text = keras2MlpWith(
      json::Object{{"class_name", "BatchNormalization"},
                   {"config", json::Object{{"name", "batch_normalization"},
                                           {"trainable", false},
                                           {"axis", json::Array{1}},
                                           {"momentum", 0.9},
                                           {"epsilon", 0.01},
                                           {"center", true},
                                           {"scale", false}}}});
  keras::ImportedModel m = keras::importModelJson(text, "keras2.json");
  Layer bn = m.model->getLayer("batch_normalization");
  EXPECT_FALSE(bn.trainable());
  std::vector<std::string> names;
  for (const Weight &w : bn.impl()->weights()) {
    names.push_back(w.name);
    EXPECT_FALSE(w.trainable) << w.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"beta", "moving_mean",
                                             "moving_variance"}));
  EXPECT_FALSE(m.model->trainingDiffers());
  std::string bad = keras2MlpWith(
      json::Object{{"class_name", "BatchNormalization"},
                   {"config", json::Object{{"name", "batch_normalization"},
                                           {"renorm", true}}}});
  EXPECT_THAT(importError(bad),
              HasSubstr("batch renormalization (renorm) is not supported"));
}

TEST(KerasLayerImport, UnsupportedClassesListWhatIsSupported) {
  std::string text = keras2MlpWith(
      json::Object{{"class_name", "TextVectorization"},
                   {"config", json::Object{{"name", "text_vectorization"}}}});
  std::string msg = importError(text);
  EXPECT_THAT(msg, HasSubstr("layer class 'TextVectorization' is "
                             "not supported (kcc imports InputLayer, Dense"));
  // The list is the registry's, every class in it.
  for (const keras::LayerClass &cls : keras::layerClasses())
    EXPECT_THAT(msg, HasSubstr(cls.name));
  EXPECT_THAT(msg,
              HasSubstr(" and " + keras::layerClasses().back().name + ")"));
}

TEST(KerasLayerImport, Keras2LayerNormalizationWithAxisList) {
  // Keras 2 writes the built axis as a list of positive axes.
  std::string text = keras2MlpWith(
      json::Object{{"class_name", "LayerNormalization"},
                   {"config", json::Object{{"name", "layer_normalization"},
                                           {"axis", json::Array{1}},
                                           {"epsilon", 1e-5},
                                           {"center", false},
                                           {"scale", true}}}});
  keras::ImportedModel m = keras::importModelJson(text, "keras2.json");
  Layer ln = m.model->getLayer("layer_normalization");
  ASSERT_EQ(ln.impl()->weights().size(), 1u);
  EXPECT_EQ(ln.impl()->weights()[0].name, "gamma");
  EXPECT_EQ(ln.impl()->kerasConfig().getNumber("epsilon"), 1e-5);
  // rms_scaling: gamma alone, even with center and without scale.
  keras::ImportedModel rms = keras::importModelJson(
      keras2MlpWith(json::Object{{"class_name", "LayerNormalization"},
                                 {"config", json::Object{{"name", "ln"},
                                                         {"rms_scaling", true},
                                                         {"center", true},
                                                         {"scale", false}}}}),
      "rms.json");
  Layer scaled = rms.model->getLayer("ln");
  ASSERT_EQ(scaled.impl()->weights().size(), 1u);
  EXPECT_EQ(scaled.impl()->weights()[0].name, "gamma");
  EXPECT_EQ(scaled.impl()->kerasConfig().getBoolean("rms_scaling"), true);
}

TEST(KerasLayerImport, AttentionValuesKccCannotHonourAreErrors) {
  std::string transposed = keras2MlpWith(
      json::Object{{"class_name", "EinsumDense"},
                   {"config", json::Object{{"name", "ed"},
                                           {"equation", "ab,cb->ac"},
                                           {"output_shape", json::Array{4}}}}});
  EXPECT_THAT(importError(transposed),
              HasSubstr("equation 'ab,cb->ac' is not supported"));
  auto mha = [](json::Object extra) {
    json::Object config{{"name", "mha"}, {"num_heads", 2}, {"key_dim", 4}};
    for (auto &kv : extra)
      config[kv.first] = std::move(kv.second);
    return keras2MlpWith(json::Object{{"class_name", "MultiHeadAttention"},
                                      {"config", std::move(config)}});
  };
  EXPECT_THAT(importError(mha(json::Object{{"dropout", 0.1}})),
              HasSubstr("layer 'mha' (MultiHeadAttention): dropout on the "
                        "attention scores is not supported"));
  EXPECT_THAT(
      importError(mha(json::Object{{"attention_axes", json::Array{1, 2}}})),
      HasSubstr("attention over axes [1, 2] is not supported"));
  EXPECT_THAT(importError(mha(json::Object{{"sliding_window", 0}})),
              HasSubstr("sliding_window: layer 'mha' (MultiHeadAttention): "
                        "sliding_window must be positive, got 0"));
  auto gqa = [](json::Object extra) {
    json::Object config{{"name", "gqa"},
                        {"head_dim", 4},
                        {"num_query_heads", 6},
                        {"num_key_value_heads", 4}};
    for (auto &kv : extra)
      config[kv.first] = std::move(kv.second);
    return keras2MlpWith(json::Object{{"class_name", "GroupQueryAttention"},
                                      {"config", std::move(config)}});
  };
  EXPECT_THAT(importError(gqa({})),
              HasSubstr("layer 'gqa' (GroupQueryAttention): num_query_heads "
                        "(6) must be divisible by num_key_value_heads (4)"));
  EXPECT_THAT(importError(gqa(
                  json::Object{{"num_key_value_heads", 3}, {"dropout", 0.5}})),
              HasSubstr("layer 'gqa' (GroupQueryAttention): dropout on the "
                        "attention scores is not supported"));
}

TEST(KerasLayerImport, GroupQueryAttentionSharesKeyValueHeads) {
  // Keras 3's config of GroupQueryAttention(head_dim=3, num_query_heads=4,
  // num_key_value_heads=2, use_gate=True, sliding_window=2)(x, x).
  std::string text = R"json({"class_name": "Functional", "config": {
    "name": "gqa_model", "layers": [
      {"class_name": "InputLayer", "name": "x", "inbound_nodes": [],
       "config": {"batch_shape": [null, 5, 6], "dtype": "float32",
                  "name": "x"}},
      {"class_name": "GroupQueryAttention", "module": "keras.layers",
       "name": "gqa",
       "config": {"name": "gqa", "head_dim": 3, "num_query_heads": 4,
                  "num_key_value_heads": 2, "use_bias": true,
                  "use_gate": true, "sliding_window": 2, "dropout": 0.0,
                  "kernel_regularizer": null, "seed": null},
       "inbound_nodes": [{"args": [
         {"class_name": "__keras_tensor__", "config": {"shape": [null, 5, 6],
          "dtype": "float32", "keras_history": ["x", 0, 0]}},
         {"class_name": "__keras_tensor__", "config": {"shape": [null, 5, 6],
          "dtype": "float32", "keras_history": ["x", 0, 0]}}],
         "kwargs": {"use_causal_mask": true}}]}],
    "input_layers": [["x", 0, 0]], "output_layers": [["gqa", 0, 0]]}})json";
  keras::ImportedModel m = keras::importModelJson(text, "gqa.json");
  Layer gqa = m.model->getLayer("gqa");
  EXPECT_TRUE(usesCausalMask(gqa));
  std::vector<std::string> names;
  std::vector<Shape> shapes;
  for (const Weight &w : gqa.impl()->weights()) {
    names.push_back(w.name);
    shapes.push_back(w.shape);
  }
  // Keras's order and shapes: the key and value project to 2 heads.
  EXPECT_EQ(names, (std::vector<std::string>{
                       "query/kernel", "query/bias", "key/kernel", "key/bias",
                       "gate/kernel", "gate/bias", "value/kernel", "value/bias",
                       "attention_output/kernel", "attention_output/bias"}));
  EXPECT_EQ(shapes, (std::vector<Shape>{{6, 4, 3},
                                        {4, 3},
                                        {6, 2, 3},
                                        {2, 3},
                                        {6, 4, 3},
                                        {4, 3},
                                        {6, 2, 3},
                                        {2, 3},
                                        {4, 3, 6},
                                        {6}}));
  json::Object config = gqa.impl()->kerasConfig();
  EXPECT_EQ(config.getInteger("num_key_value_heads"), 2);
  EXPECT_EQ(config.getInteger("sliding_window"), 2);
  EXPECT_EQ(config.getBoolean("use_gate"), true);
  // Keras saves its weights under the Python class's name.
  EXPECT_EQ(namePrefix("GroupQueryAttention"), "grouped_query_attention");
  EXPECT_EQ(keras::sublayerGroup("GroupQueryAttention", "key"), "_key_dense");
  EXPECT_EQ(keras::sublayerGroup("MultiHeadAttention", "key"), "key_dense");
  EXPECT_EQ(keras::sublayerGroup("MultiHeadAttention", "gate"), "_gate_dense");
}

TEST(KerasLayerImport, Keras2AttentionTakesValueAndCausalMaskFromKwargs) {
  // tf.keras 2 writes mha(x, x, use_causal_mask=True) as one reference whose
  // kwargs hold the value reference and the flag.
  std::string text = R"json({"class_name": "Functional", "config": {
    "name": "attend", "layers": [
      {"class_name": "InputLayer", "name": "x", "inbound_nodes": [],
       "config": {"batch_input_shape": [null, 5, 6], "dtype": "float32",
                  "name": "x"}},
      {"class_name": "MultiHeadAttention", "name": "mha",
       "config": {"name": "mha", "num_heads": 2, "key_dim": 3,
                  "value_dim": null, "dropout": 0.0, "use_bias": true,
                  "output_shape": null, "attention_axes": null},
       "inbound_nodes": [[["x", 0, 0, {"value": ["x", 0, 0],
                                       "use_causal_mask": true}]]]}],
    "input_layers": [["x", 0, 0]], "output_layers": [["mha", 0, 0]]},
    "keras_version": "2.15.0", "backend": "tensorflow"})json";
  keras::ImportedModel m = keras::importModelJson(text, "keras2.json");
  Layer mha = m.model->getLayer("mha");
  EXPECT_TRUE(usesCausalMask(mha));
  std::vector<std::string> names;
  for (const Weight &w : mha.impl()->weights())
    names.push_back(w.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "query/kernel", "query/bias", "key/kernel", "key/bias",
                       "value/kernel", "value/bias", "attention_output/kernel",
                       "attention_output/bias"}));
  // The attention mask is the layer's fourth input, after the key (here
  // the value): x [5, 6] is no [5 query steps, 5 key steps] mask.
  std::string masked = text;
  masked = replaceOnce(masked, "\"use_causal_mask\": true",
                       "\"attention_mask\": [\"x\", 0, 0]");
  EXPECT_THAT(errorOf([&] { keras::importModelJson(masked, "m.json"); }),
              HasSubstr("layer 'mha' (MultiHeadAttention): attention_mask "
                        "[None, 5, 6] is not broadcastable to [batch, query "
                        "steps, key steps] [None, 5, 5]"));
  // A second input of the right shape is taken.
  std::string withInput =
      replaceOnce(masked, "\"attention_mask\": [\"x\", 0, 0]",
                  "\"attention_mask\": [\"m\", 0, 0]");
  withInput = replaceOnce(
      withInput, "{\"class_name\": \"MultiHeadAttention\"",
      "{\"class_name\": \"InputLayer\", \"name\": \"m\", "
      "\"inbound_nodes\": [], \"config\": {\"batch_input_shape\": [null, 1, "
      "5], \"dtype\": \"float32\", \"name\": \"m\"}},\n"
      "      {\"class_name\": \"MultiHeadAttention\"");
  withInput = replaceOnce(withInput, "\"input_layers\": [[\"x\", 0, 0]]",
                          "\"input_layers\": [[\"x\", 0, 0], [\"m\", 0, 0]]");
  keras::ImportedModel two = keras::importModelJson(withInput, "m.json");
  EXPECT_EQ(two.model->graphInputs().size(), 2u);
}

TEST(KerasLayerImport, Keras2SoftmaxTakesItsMaskFromKwargs) {
  // tf.keras 2 writes Softmax()(s, mask=m) as one reference whose kwargs
  // hold the mask's reference: the layer's second input, kept over 0.5.
  std::string text = R"json({"class_name": "Functional", "config": {
    "name": "attend", "layers": [
      {"class_name": "InputLayer", "name": "s", "inbound_nodes": [],
       "config": {"batch_input_shape": [null, 2, 3], "dtype": "float32",
                  "name": "s"}},
      {"class_name": "InputLayer", "name": "m", "inbound_nodes": [],
       "config": {"batch_input_shape": [null, 1, 3], "dtype": "float32",
                  "name": "m"}},
      {"class_name": "Softmax", "name": "sm",
       "config": {"name": "sm", "axis": -1},
       "inbound_nodes": [[["s", 0, 0, {"mask": ["m", 0, 0]}]]]}],
    "input_layers": [["s", 0, 0], ["m", 0, 0]],
    "output_layers": [["sm", 0, 0]]},
    "keras_version": "2.15.0", "backend": "tensorflow"})json";
  keras::ImportedModel m = keras::importModelJson(text, "keras2.json");
  std::vector<Tensor> out =
      m.model->call({Tensor(NDArray::fromVector({1, 2, 3}, {0, 1, 2, 3, 4, 5})),
                     Tensor(NDArray::fromVector({1, 1, 3}, {0.2, 0.8, 0.9}))},
                    CallContext{});
  std::vector<double> y = out[0].toVector();
  double e = std::exp(1.0);
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 1 / (1 + e), 1e-6);
  EXPECT_NEAR(y[5], e / (1 + e), 1e-6);
  // A mask of a shape that does not broadcast is the layer's error.
  std::string wrong = replaceOnce(text, "[null, 1, 3]", "[null, 2, 2]");
  EXPECT_THAT(errorOf([&] { keras::importModelJson(wrong, "m.json"); }),
              HasSubstr("layer 'sm' (Softmax): the mask [None, 2, 2] is not "
                        "broadcastable to the input [None, 2, 3]"));
}

/// A tf.keras 2 functional model of one recurrent layer `layer` (class and
/// config) on [batch, 5, 6] floats.
std::string keras2Recurrent(json::Object layer) {
  layer["name"] = "rnn";
  layer["inbound_nodes"] =
      json::Array{json::Array{json::Array{"x", 0, 0, json::Object{}}}};
  json::Object input{
      {"class_name", "InputLayer"},
      {"name", "x"},
      {"inbound_nodes", json::Array{}},
      {"config", json::Object{{"batch_input_shape", json::Array{nullptr, 5, 6}},
                              {"dtype", "float32"},
                              {"name", "x"}}}};
  json::Object model{
      {"class_name", "Functional"},
      {"config",
       json::Object{{"name", "recurrent"},
                    {"layers", json::Array{std::move(input), std::move(layer)}},
                    {"input_layers", json::Array{json::Array{"x", 0, 0}}},
                    {"output_layers", json::Array{json::Array{"rnn", 0, 0}}}}},
      {"keras_version", "2.15.0"},
      {"backend", "tensorflow"}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << json::Value(std::move(model));
  return text;
}

json::Object recurrentLayer(const char *cls, json::Object extra) {
  json::Object config{{"name", "rnn"}, {"units", 4}};
  for (auto &kv : extra)
    config[kv.first] = std::move(kv.second);
  return json::Object{{"class_name", cls}, {"config", std::move(config)}};
}

std::vector<std::pair<std::string, Shape>> weightShapes(const Layer &layer) {
  std::vector<std::pair<std::string, Shape>> out;
  for (const Weight &w : layer.impl()->weights())
    out.push_back({w.name, w.shape});
  return out;
}

TEST(KerasLayerImport, Keras2RecurrentLayersAndTheirCells) {
  keras::ImportedModel lstm = keras::importModelJson(
      keras2Recurrent(recurrentLayer("LSTM", json::Object{{"implementation", 2},
                                                          {"time_major", false},
                                                          {"unroll", true}})),
      "lstm.json");
  using W = std::vector<std::pair<std::string, Shape>>;
  EXPECT_EQ(weightShapes(lstm.model->getLayer("rnn")),
            (W{{"cell/kernel", {6, 16}},
               {"cell/recurrent_kernel", {4, 16}},
               {"cell/bias", {16}}}));
  keras::ImportedModel gru =
      keras::importModelJson(keras2Recurrent(recurrentLayer(
                                 "GRU", json::Object{{"reset_after", false}})),
                             "gru.json");
  EXPECT_EQ(weightShapes(gru.model->getLayer("rnn")),
            (W{{"cell/kernel", {6, 12}},
               {"cell/recurrent_kernel", {4, 12}},
               {"cell/bias", {12}}}));
  keras::ImportedModel bi = keras::importModelJson(
      keras2Recurrent(json::Object{
          {"class_name", "Bidirectional"},
          {"config", json::Object{{"name", "rnn"},
                                  {"merge_mode", "ave"},
                                  {"layer", recurrentLayer("SimpleRNN",
                                                           json::Object{})}}}}),
      "bi.json");
  EXPECT_EQ(weightShapes(bi.model->getLayer("rnn")),
            (W{{"forward_layer/cell/kernel", {6, 4}},
               {"forward_layer/cell/recurrent_kernel", {4, 4}},
               {"forward_layer/cell/bias", {4}},
               {"backward_layer/cell/kernel", {6, 4}},
               {"backward_layer/cell/recurrent_kernel", {4, 4}},
               {"backward_layer/cell/bias", {4}}}));
}

/// An RNN layer (named "rnn") around `cell`, with the RNN's `extra` keys.
json::Object rnnLayer(json::Object cell, json::Object extra = {}) {
  json::Object config{{"name", "rnn"}, {"cell", std::move(cell)}};
  for (auto &kv : extra)
    config[kv.first] = std::move(kv.second);
  return json::Object{{"class_name", "RNN"}, {"config", std::move(config)}};
}

json::Object stackedCells(json::Array cells) {
  return json::Object{{"class_name", "StackedRNNCells"},
                      {"config", json::Object{{"cells", std::move(cells)}}}};
}

TEST(KerasLayerImport, Keras2RnnOfCellsAndOfAStack) {
  using W = std::vector<std::pair<std::string, Shape>>;
  keras::ImportedModel one = keras::importModelJson(
      keras2Recurrent(rnnLayer(recurrentLayer("GRUCell", json::Object{}),
                               json::Object{{"return_sequences", true}})),
      "rnn.json");
  EXPECT_EQ(weightShapes(one.model->getLayer("rnn")),
            (W{{"cell/kernel", {6, 12}},
               {"cell/recurrent_kernel", {4, 12}},
               {"cell/bias", {2, 12}}}));
  EXPECT_EQ(one.model->outputShapes(), (std::vector<Shape>{{5, 4}}));
  // Two cells of one class are numbered as Keras's .keras writer numbers
  // the list; each cell reads the previous one's units.
  keras::ImportedModel stack = keras::importModelJson(
      keras2Recurrent(
          rnnLayer(stackedCells(json::Array{
                       recurrentLayer("LSTMCell", json::Object{{"units", 3}}),
                       recurrentLayer("SimpleRNNCell",
                                      json::Object{{"use_bias", false}}),
                       recurrentLayer("LSTMCell", json::Object{{"units", 2}})}),
                   json::Object{{"return_state", true}})),
      "stack.json");
  EXPECT_EQ(weightShapes(stack.model->getLayer("rnn")),
            (W{{"cell/cells/lstm_cell/kernel", {6, 12}},
               {"cell/cells/lstm_cell/recurrent_kernel", {3, 12}},
               {"cell/cells/lstm_cell/bias", {12}},
               {"cell/cells/simple_rnn_cell/kernel", {3, 4}},
               {"cell/cells/simple_rnn_cell/recurrent_kernel", {4, 4}},
               {"cell/cells/lstm_cell_1/kernel", {4, 8}},
               {"cell/cells/lstm_cell_1/recurrent_kernel", {2, 8}},
               {"cell/cells/lstm_cell_1/bias", {8}}}));
  // The output, then every cell's states: (h, c), h, (h, c).
  std::vector<Tensor> outs = stack.model->getLayer("rnn").call(
      {Tensor(NDArray::zeros({2, 5, 6}, DType::F32))}, CallContext{});
  std::vector<Shape> shapes;
  for (const Tensor &t : outs)
    shapes.push_back(t.shape());
  EXPECT_EQ(shapes, (std::vector<Shape>{
                        {2, 2}, {2, 3}, {2, 3}, {2, 4}, {2, 2}, {2, 2}}));
}

TEST(KerasLayerImport, RnnCellsKccCannotHonourAreErrors) {
  auto error = [](json::Object cell, json::Object extra = {}) {
    return importError(
        keras2Recurrent(rnnLayer(std::move(cell), std::move(extra))));
  };
  EXPECT_THAT(
      error(json::Object{{"class_name", "ConvLSTM2DCell"},
                         {"config", json::Object{{"filters", 3}}}}),
      HasSubstr("$.config.layers[1].config.cell.class_name: layer 'rnn' "
                "(RNN): an RNN cell 'ConvLSTM2DCell' is not supported "
                "(LSTMCell, GRUCell, SimpleRNNCell or a StackedRNNCells of "
                "them)"));
  EXPECT_THAT(error(stackedCells(json::Array{recurrentLayer(
                  "LSTMCell", json::Object{{"recurrent_dropout", 0.5}})})),
              HasSubstr("cells[0].config.recurrent_dropout: layer 'rnn' "
                        "(RNN): 'recurrent_dropout' is not supported (must "
                        "be 0)"));
  EXPECT_THAT(error(stackedCells(json::Array{})),
              HasSubstr("a StackedRNNCells needs a list of 'cells'"));
  EXPECT_THAT(error(recurrentLayer("SimpleRNNCell", json::Object{}),
                    json::Object{{"stateful", true}}),
              HasSubstr("stateful: true is not supported"));
}

TEST(KerasLayerImport, RecurrentValuesKccCannotHonourAreErrors) {
  auto error = [](const char *cls, json::Object extra) {
    return importError(keras2Recurrent(recurrentLayer(cls, std::move(extra))));
  };
  EXPECT_THAT(error("LSTM", json::Object{{"dropout", 0.2}}),
              HasSubstr("layer 'rnn' (LSTM): 'dropout' is not supported "
                        "(must be 0)"));
  EXPECT_THAT(error("GRU", json::Object{{"recurrent_dropout", 0.1}}),
              HasSubstr("'recurrent_dropout' is not supported"));
  EXPECT_THAT(error("SimpleRNN", json::Object{{"stateful", true}}),
              HasSubstr("stateful: true is not supported"));
  EXPECT_THAT(
      error("LSTM", json::Object{{"recurrent_activation", "hard_sigmoid"}}),
      HasSubstr("activation 'hard_sigmoid' of a Keras 2 spec is not "
                "supported"));
  EXPECT_THAT(error("GRU", json::Object{{"activation", "selu"}}),
              HasSubstr("activation 'selu' is not supported in a recurrent "
                        "cell"));
  EXPECT_THAT(error("LSTM", json::Object{{"units", 0}}),
              HasSubstr("units must be positive, got 0"));
  EXPECT_THAT(
      error("LSTM", json::Object{{"kernel_constraint",
                                  json::Object{{"class_name", "MaxNorm"}}}}),
      HasSubstr("'kernel_constraint' is not supported"));
  auto bidirectional = [](json::Object config) {
    config["name"] = "rnn";
    return importError(keras2Recurrent(json::Object{
        {"class_name", "Bidirectional"}, {"config", std::move(config)}}));
  };
  EXPECT_THAT(bidirectional(json::Object{
                  {"merge_mode", nullptr},
                  {"layer", recurrentLayer("LSTM", json::Object{})}}),
              HasSubstr("merge_mode: null (separate forward and backward "
                        "outputs) is not supported"));
  EXPECT_THAT(
      bidirectional(json::Object{
          {"layer", json::Object{{"class_name", "Dense"},
                                 {"config", json::Object{{"units", 3}}}}}}),
      HasSubstr("Bidirectional around 'Dense' is not supported"));
  EXPECT_THAT(
      bidirectional(json::Object{
          {"layer", recurrentLayer("LSTM", json::Object{})},
          {"backward_layer",
           recurrentLayer(
               "LSTM", json::Object{{"units", 5}, {"go_backwards", true}})}}),
      HasSubstr("a backward_layer other than the forward layer going the "
                "other way is not supported"));
}

} // namespace

namespace {

/// mlp_keras2.json with the first Dense's `key` set to `value`.
std::string keras2MlpDenseWith(llvm::StringRef key, json::Value value) {
  json::Value spec = readJson("mlp_keras2.json");
  json::Array &layers =
      *spec.getAsObject()->getObject("config")->getArray("layers");
  for (json::Value &l : layers)
    if (l.getAsObject()->getString("class_name") == "Dense") {
      (*l.getAsObject()->getObject("config"))[key] = std::move(value);
      break;
    }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << spec;
  return text;
}

json::Value kerasRegularizer(const char *cls, json::Object config) {
  return json::Object{{"module", "keras.regularizers"},
                      {"class_name", cls},
                      {"config", std::move(config)},
                      {"registered_name", nullptr}};
}

TEST(KerasLayerImport, RegularizersInEveryForm) {
  struct Case {
    const char *key;
    json::Value value;
    double l1, l2;
  };
  Case cases[] = {
      {"kernel_regularizer", "l1", 0.01, 0},
      {"kernel_regularizer", "l2", 0, 0.01},
      // Keras 2's l1_l2() defaults to 0.01 each (Keras 3's L1L2() to 0).
      {"kernel_regularizer", "l1_l2", 0.01, 0.01},
      {"bias_regularizer", kerasRegularizer("L2", json::Object{{"l2", 0.25}}),
       0, 0.25},
      {"kernel_regularizer",
       json::Object{{"class_name", "L1L2"},
                    {"config", json::Object{{"l1", 0.5}, {"l2", 0.0}}}},
       0.5, 0},
  };
  for (Case &c : cases) {
    keras::ImportedModel m = keras::importModelJson(
        keras2MlpDenseWith(c.key, std::move(c.value)), "keras2.json");
    llvm::StringRef weight = llvm::StringRef(c.key).split('_').first;
    std::optional<Regularizer> r =
        m.model->getLayer("dense").impl()->weightRegularizer(weight.str());
    ASSERT_TRUE(r) << c.key;
    EXPECT_EQ(r->l1, c.l1) << c.key;
    EXPECT_EQ(r->l2, c.l2) << c.key;
  }
  keras::ImportedModel a = keras::importModelJson(
      keras2MlpDenseWith("activity_regularizer",
                         kerasRegularizer("L1", json::Object{{"l1", 0.125}})),
      "keras2.json");
  ASSERT_TRUE(a.model->getLayer("dense").impl()->activityRegularizer());
  EXPECT_EQ(a.model->getLayer("dense").impl()->activityRegularizer()->l1,
            0.125);

  EXPECT_THAT(importError(keras2MlpDenseWith(
                  "kernel_regularizer",
                  kerasRegularizer("OrthogonalRegularizer", json::Object{}))),
              HasSubstr("regularizer 'OrthogonalRegularizer' is not supported "
                        "(L1, L2 or L1L2)"));
  EXPECT_THAT(importError(keras2MlpDenseWith(
                  "kernel_regularizer",
                  kerasRegularizer("L2", json::Object{{"l2", -1.0}}))),
              HasSubstr("'kernel_regularizer' l2 must be a finite value >= 0"));
  // A regularizer on a weight the class does not have.
  EXPECT_THAT(errorOf([] { Dense(3).withRegularizer("gamma", {0, 1}); }),
              HasSubstr("(Dense): has no gamma_regularizer (it takes "
                        "kernel_regularizer, bias_regularizer)"));
}

} // namespace
