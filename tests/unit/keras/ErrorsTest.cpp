//===- ErrorsTest.cpp - Bad Keras input gives located errors --------------===//
//
// Each broken input is a real fixture with one edit; the message must name
// the source, the location (line:col or JSON path or HDF5 path) and the
// layer, and say what is wrong.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/keras/KerasTestUtil.h"

using namespace kcc;
using namespace kcc::keras_test;
using ::testing::HasSubstr;

namespace {

std::string importError(const std::string &text,
                        const std::string &name = "bad.json") {
  return errorOf([&] { keras::importModelJson(text, name); });
}

TEST(KerasErrors, TruncatedJsonGivesLineAndColumn) {
  std::string text = readText("mlp_keras3.json");
  text.resize(200);
  std::string msg = importError(text, "mlp.json");
  EXPECT_THAT(msg, HasSubstr("mlp.json:"));
  EXPECT_THAT(msg, HasSubstr("invalid JSON"));
  // Line 23 is where the 200th byte falls in the indented fixture.
  EXPECT_THAT(msg, ::testing::MatchesRegex("mlp\\.json:[0-9]+:[0-9]+: .*"));
  EXPECT_THAT(importError("{\"class_name\": \"Sequential\",, }", "x.json"),
              HasSubstr("x.json:1:"));
}

TEST(KerasErrors, UnknownLayerClass) {
  std::string text =
      replaceOnce(readText("mlp_keras3.json"), "\"class_name\": \"Dense\"",
                  "\"class_name\": \"Bogus\"");
  std::string msg = importError(text);
  EXPECT_THAT(msg, HasSubstr("bad.json: $.config.layers[2].config: "
                             "layer 'dense' (Bogus): layer class 'Bogus' is "
                             "not supported"));
}

TEST(KerasErrors, MissingUnitsNamesPathAndLayer) {
  std::string text =
      replaceOnce(readText("mlp_keras3.json"), "\"units\": 64,", "");
  EXPECT_EQ(importError(text),
            "bad.json: $.config.layers[3].config.units: layer 'dense_1' "
            "(Dense): missing required field 'units'");
}

TEST(KerasErrors, WrongTypeOfField) {
  std::string text = replaceOnce(readText("cnn_keras3.json"), "\"filters\": 64",
                                 "\"filters\": \"64\"");
  EXPECT_EQ(importError(text),
            "bad.json: $.config.layers[3].config.filters: layer 'conv2d_1' "
            "(Conv2D): 'filters' must be an integer, got a string");
}

TEST(KerasErrors, KerasHistoryNamingAMissingLayer) {
  std::string text = replaceOnce(readText("residual_keras3.json"),
                                 "\"keras_history\": [\n          \"dense_1\"",
                                 "\"keras_history\": [\n          \"nope\"");
  std::string msg = importError(text);
  EXPECT_THAT(msg, HasSubstr("$.config.layers[4].inbound_nodes[0].args[0]."
                             "config.keras_history"));
  EXPECT_THAT(msg, HasSubstr("refers to layer 'nope', which is not in the "
                             "model"));
}

TEST(KerasErrors, CycleIsReported) {
  // dense now consumes dense_2, which (through dense_1) consumes dense.
  std::string text = replaceOnce(readText("residual_keras3.json"),
                                 "\"keras_history\": [\n          \"flatten\"",
                                 "\"keras_history\": [\n          \"dense_2\"");
  std::string msg = importError(text);
  EXPECT_THAT(msg, HasSubstr("cycle through layer 'dense"));
  EXPECT_THAT(msg, HasSubstr("bad.json: $.config.layers["));
}

TEST(KerasErrors, ShapeMismatchAtTheNode) {
  // dense_2 (the third Dense(64)) now gives 32 features: Add cannot sum
  // them with dense's 64.
  std::string text = readText("residual_keras3.json");
  size_t pos = std::string::npos;
  for (int i = 0; i < 3; ++i)
    pos = text.find("\"units\": 64", pos + 1);
  ASSERT_NE(pos, std::string::npos);
  text.replace(pos, 11, "\"units\": 32");
  std::string msg = importError(text);
  EXPECT_THAT(msg, HasSubstr("bad.json: $.config.layers[5].inbound_nodes[0]: "
                             "layer 'add'"));
  EXPECT_THAT(msg, HasSubstr("32"));
}

TEST(KerasErrors, LambdaAndCustomObjects) {
  std::string lambda =
      replaceOnce(readText("mlp_keras3.json"), "\"class_name\": \"Flatten\"",
                  "\"class_name\": \"Lambda\"");
  EXPECT_THAT(importError(lambda),
              HasSubstr("$.config.layers[1].config: layer 'flatten' "
                        "(Lambda): Lambda layers hold Python code"));
  std::string custom =
      replaceOnce(readText("mlp_keras3.json"),
                  "\"registered_name\": null,\n    \"build_config\": {\n     "
                  "\"input_shape\": [\n      null,\n      784",
                  "\"registered_name\": \"MyLib>MyDense\",\n    "
                  "\"build_config\": {\n     \"input_shape\": [\n      "
                  "null,\n      784");
  EXPECT_THAT(importError(custom),
              HasSubstr("$.config.layers[2].registered_name: layer 'dense' "
                        "(Dense): custom layer 'MyLib>MyDense' is Python "
                        "code, which kcc cannot run; from C++ register a "
                        "layer class for it with "
                        "kcc::keras::registerLayerClass"));
  std::string module = replaceOnce(readText("mlp_keras3.json"),
                                   "\"module\": \"keras.layers\",\n    "
                                   "\"class_name\": \"Flatten\"",
                                   "\"module\": \"mylib.layers\",\n    "
                                   "\"class_name\": \"Flatten\"");
  EXPECT_THAT(importError(module),
              HasSubstr("$.config.layers[1].module: layer 'flatten' "
                        "(Flatten): custom object from module "
                        "'mylib.layers'"));
}

TEST(KerasErrors, UnsupportedSemanticValues) {
  std::string first = replaceOnce(readText("cnn_keras3.json"),
                                  "\"data_format\": \"channels_last\"",
                                  "\"data_format\": \"channels_first\"");
  EXPECT_THAT(importError(first),
              HasSubstr("$.config.layers[1].config.data_format: layer "
                        "'conv2d' (Conv2D): data_format 'channels_first' is "
                        "not supported"));
  std::string grouped = replaceOnce(readText("cnn_keras3.json"),
                                    "\"groups\": 1", "\"groups\": 3");
  EXPECT_THAT(importError(grouped),
              HasSubstr("config.groups: layer 'conv2d' (Conv2D): groups (3) "
                        "must be positive and divide filters (32)"));
  std::string causal =
      replaceOnce(readText("cnn_keras3.json"), "\"padding\": \"valid\"",
                  "\"padding\": \"causal\"");
  EXPECT_THAT(importError(causal),
              HasSubstr("config.padding: layer 'conv2d' (Conv2D): padding "
                        "'causal' is not supported (valid or same)"));
  std::string act =
      replaceOnce(readText("mlp_keras3.json"), "\"activation\": \"relu\"",
                  "\"activation\": \"celu\"");
  EXPECT_THAT(importError(act),
              HasSubstr("$.config.layers[2].config.activation: layer 'dense' "
                        "(Dense): activation 'celu' is not supported"));
  std::string reg =
      replaceOnce(readText("mlp_keras3.json"), "\"kernel_regularizer\": null",
                  "\"kernel_regularizer\": "
                  "\"orthogonal_regularizer\"");
  EXPECT_THAT(importError(reg),
              HasSubstr("config.kernel_regularizer: layer 'dense' (Dense): "
                        "regularizer 'orthogonal_regularizer' is not "
                        "supported (l1, l2 or l1_l2)"));
}

/// Keras 3 saves the mask a layer received as its `mask` argument; kcc
/// derives masks itself, so an argument it cannot match is an error at its
/// path (mask_gap: Embedding(mask_zero=True), Dense, Dropout,
/// GlobalAveragePooling1D given the mask of keras.ops's NotEqual).
TEST(KerasErrors, MaskArgumentsKccCannotDerive) {
  std::string text =
      keras::importKerasArchive(fixture("masks/mask_gap.keras")).configJson;
  std::string unmasked = importError(
      replaceOnce(text, "\"mask_zero\": true", "\"mask_zero\": false"));
  EXPECT_THAT(unmasked, HasSubstr(".inbound_nodes[0].kwargs.mask: layer "
                                  "'global_average_pooling1d' "
                                  "(GlobalAveragePooling1D): the layer "
                                  "receives a mask that kcc does not derive"));
  std::string foreign =
      importError(replaceOnce(text, "\"keras_history\": [\"not_equal\", 0, 0]",
                              "\"keras_history\": [\"dense\", 0, 0]"));
  EXPECT_THAT(foreign, HasSubstr("kwargs.mask: layer "
                                 "'global_average_pooling1d' "
                                 "(GlobalAveragePooling1D): a mask computed "
                                 "by 'dense' (Dense) is not supported"));
}

/// A Sequential of an 8x8x1 input and `layer` (a layer's JSON object).
std::string sequentialWith(const std::string &layer) {
  return R"({"module": "keras", "class_name": "Sequential", "config":
  {"name": "s", "layers": [{"module": "keras.layers", "class_name":
  "InputLayer", "config": {"batch_shape": [null, 8, 8, 1], "dtype":
  "float32", "name": "in"}}, )" +
         layer + "]}}";
}

TEST(KerasErrors, PreprocessingConfigs) {
  EXPECT_THAT(
      importError(sequentialWith(
          R"({"class_name": "Resizing", "config": {"name": "r", "height": 4,
          "width": 4, "interpolation": "bicubic"}})")),
      HasSubstr("bad.json: $.config.layers[1].config.interpolation: layer "
                "'r' (Resizing): interpolation 'bicubic' is not supported "
                "(bilinear, nearest)"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "Resizing", "config": {"name": "r",
                  "height": 0, "width": 4}})")),
              HasSubstr("config.height: layer 'r' (Resizing): 'height' must "
                        "be in [1, 2^24], got 0"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "CenterCrop", "config": {"name": "c",
                  "height": 4, "width": 4, "data_format":
                  "channels_first"}})")),
              HasSubstr("config.data_format: layer 'c' (CenterCrop): "
                        "data_format 'channels_first' is not supported"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "Normalization", "config": {"name": "n",
                  "mean": [0.5], "variance": null}})")),
              HasSubstr("config.variance: layer 'n' (Normalization): 'mean' "
                        "and 'variance' must both be given or both be null"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "Normalization", "config": {"name": "n",
                  "mean": [0.5, 1], "variance": [1, -2]}})")),
              HasSubstr("config.variance: layer 'n' (Normalization): "
                        "'variance' must be finite and >= 0"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "Normalization", "config": {"name": "n",
                  "axis": 4}})")),
              HasSubstr("layer 'n' (Normalization): axis 4 is out of range "
                        "for an input [None, 8, 8, 1]"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "Normalization", "config": {"name": "n",
                  "mean": [1, 2, 3], "variance": [1, 1, 1]}})")),
              HasSubstr("layer 'n' (Normalization): mean [3] does not "
                        "broadcast to the kept axes of [None, 8, 8, 1]"));
}

/// The geometric augmentations refuse what Keras's constructors refuse
/// (factors out of range, unknown fill modes and interpolations), at the
/// field and under the layer's name.
TEST(KerasErrors, GeometricAugmentationConfigs) {
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomRotation", "config": {"name":
                  "rot", "factor": 1.5}})")),
              HasSubstr("bad.json: $.config.layers[1].config.factor: layer "
                        "'rot' (RandomRotation): 'factor' must be in [-1, "
                        "1]"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomRotation", "config": {"name":
                  "rot", "factor": 0.1, "fill_mode": "mirror"}})")),
              HasSubstr("config.fill_mode: layer 'rot' (RandomRotation): "
                        "fill_mode 'mirror' is not one of reflect, wrap, "
                        "constant, nearest"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomZoom", "config": {"name": "z",
                  "height_factor": [-1.0, 0.2], "width_factor": null}})")),
              HasSubstr("config.height_factor: layer 'z' (RandomZoom): "
                        "'height_factor' must be in (-1, 1], got -1"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomZoom", "config": {"name": "z",
                  "height_factor": 0.2, "interpolation": "bicubic"}})")),
              HasSubstr("config.interpolation: layer 'z' (RandomZoom): "
                        "interpolation 'bicubic' is not one of bilinear, "
                        "nearest"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomTranslation", "config": {"name":
                  "t", "height_factor": 0.1, "width_factor": 1.2}})")),
              HasSubstr("config.width_factor: layer 't' (RandomTranslation): "
                        "'width_factor' must be in [-1, 1], got 1.2"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomTranslation", "config": {"name":
                  "t", "height_factor": 0.1}})")),
              HasSubstr("config.width_factor: layer 't' (RandomTranslation): "
                        "missing required field 'width_factor'"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomCrop", "config": {"name": "c",
                  "height": 0, "width": 4}})")),
              HasSubstr("config.height: layer 'c' (RandomCrop): 'height' "
                        "must be in [1, 2^24], got 0"));
  EXPECT_THAT(importError(sequentialWith(
                  R"({"class_name": "RandomCrop", "config": {"name": "c",
                  "height": 4, "width": 4, "seed": -3}})")),
              HasSubstr("config.seed: layer 'c' (RandomCrop): 'seed' must "
                        "be null or a non-negative integer"));
}

/// A Sequential of a [4, 8, 8, 1] input (a clip of 4 frames) and `layer`.
std::string clipSequentialWith(const std::string &layer) {
  return R"({"module": "keras", "class_name": "Sequential", "config":
  {"name": "s", "layers": [{"module": "keras.layers", "class_name":
  "InputLayer", "config": {"batch_shape": [null, 4, 8, 8, 1], "dtype":
  "float32", "name": "in"}}, )" +
         layer + "]}}";
}

TEST(KerasErrors, VolumeAndTimeDistributedConfigs) {
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "Conv3D", "config": {"name": "c",
                  "filters": 2, "kernel_size": [3, 3]}})")),
              HasSubstr("bad.json: $.config.layers[1].config.kernel_size: "
                        "layer 'c' (Conv3D): 'kernel_size' must be an int or "
                        "a list of three ints"));
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "Conv3D", "config": {"name": "c",
                  "filters": 2, "kernel_size": 3, "groups": 2}})")),
              HasSubstr("config.groups: layer 'c' (Conv3D): grouped 3-D "
                        "convolutions are not supported"));
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "Cropping3D", "config": {"name": "k",
                  "cropping": [[1, 1], [2], [0, 0]]}})")),
              HasSubstr("config.cropping: layer 'k' (Cropping3D): 'cropping' "
                        "must be an int, [d, h, w] or [[front, back]"));
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "Cropping3D", "config": {"name": "k",
                  "cropping": [2, 0, 0]}})")),
              HasSubstr("layer 'k' (Cropping3D): cropping 2 and 2 of axis 1 "
                        "leaves nothing of [None, 4, 8, 8, 1]"));
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "MaxPooling3D", "config": {"name": "p",
                  "pool_size": [5, 2, 2]}})")),
              HasSubstr("bad.json: $.config.layers[1]: layer 'p': "
                        "max_pool3d: the window spans 5 depth steps, the "
                        "input has 4"));
  // The wrapped layer's errors are located inside `layer`.
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "TimeDistributed", "config": {"name":
                  "t", "layer": {"class_name": "Conv2D", "config": {"name":
                  "inner", "filters": 2, "kernel_size": 3, "padding":
                  "full"}}}})")),
              HasSubstr("bad.json: $.config.layers[1].config.layer.config."
                        "padding: layer 'inner' (Conv2D): padding 'full' is "
                        "not supported (valid or same)"));
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "TimeDistributed", "config": {"name":
                  "t", "layer": {"class_name": "Functional", "config":
                  {"name": "f", "layers": []}}}})")),
              HasSubstr("$.config.layers[1].config.layer.class_name: layer "
                        "'t' (TimeDistributed): TimeDistributed of a "
                        "functional model is not supported"));
  // A frame of the clip is no volume.
  EXPECT_THAT(importError(clipSequentialWith(
                  R"({"class_name": "TimeDistributed", "config": {"name":
                  "t", "layer": {"class_name": "Conv3D", "config": {"name":
                  "inner", "filters": 2, "kernel_size": 3}}}})")),
              HasSubstr("layer 'inner' (Conv3D): expects one NDHWC input of "
                        "rank 5, got [None, 8, 8, 1]"));
}

TEST(KerasErrors, ArchiveWithoutConfigJson) {
  std::string path = fixture("bad_no_config.keras");
  EXPECT_EQ(errorOf([&] { keras::importKerasArchive(path); }),
            path + ": not a Keras archive: config.json is missing");
  EXPECT_THAT(errorOf([&] { keras::importFile(fixture("nonexistent.keras")); }),
              HasSubstr("nonexistent.keras: cannot read"));
}

TEST(KerasErrors, WeightOfTheWrongShape) {
  std::string path = fixture("bad_weight_shape.keras");
  EXPECT_EQ(errorOf([&] { keras::importKerasArchive(path); }),
            path + ":model.weights.h5: layers/dense/vars/0: layer 'dense' "
                   "(Dense): weight 'kernel' is [784, 100] but the file has "
                   "[784, 128]");
  // The same through a legacy .h5 loaded into a spec.
  keras::ImportedModel m =
      keras::importModelJson(replaceOnce(readText("mlp_keras2.json"),
                                         "\"units\": 64", "\"units\": 65"),
                             "mlp.json");
  EXPECT_THAT(
      errorOf([&] { keras::loadWeightsH5File(m, fixture("mlp_keras2.h5")); }),
      HasSubstr("model_weights/dense_1/dense_1/kernel:0: layer "
                "'dense_1' (Dense): weight 'kernel' is [128, 65] but "
                "the file has [128, 64]"));
}

TEST(KerasErrors, ModelLevelProblems) {
  EXPECT_EQ(importError("[1, 2]"),
            "bad.json: $: expected a model (an object), got an array");
  EXPECT_EQ(importError("{\"class_name\": \"Sequential\"}"),
            "bad.json: $.config: model (Sequential): missing required field "
            "'config'");
  EXPECT_THAT(importError("{\"class_name\": \"Graph\", \"config\": "
                          "{\"layers\": []}}"),
              HasSubstr("$.class_name: model (Graph): model class 'Graph' "
                        "is not supported"));
  std::string noOut = replaceOnce(readText("residual_keras3.json"),
                                  "\"output_layers\"", "\"outputs_x\"");
  EXPECT_THAT(importError(noOut),
              HasSubstr("$.config.output_layers: model 'residual': missing "
                        "required field 'output_layers'"));
}

TEST(KerasErrors, NestedModelProblemsNameTheInnerLayer) {
  std::string siamese = readText("nested/siamese.json");
  // A layer of the tower: its path runs through the nested model's config.
  std::string bogus = replaceOnce(siamese, "\"class_name\": \"Flatten\"",
                                  "\"class_name\": \"Bogus\"");
  EXPECT_THAT(importError(bogus),
              HasSubstr("bad.json: $.config.layers[3].config.layers[2]."
                        "config: layer 'flatten' (Bogus): layer class "
                        "'Bogus' is not supported"));
  // kcc's model holds the nested model's layers beside its own, so their
  // names must differ (Keras's auto-names do).
  std::string clash = siamese;
  for (size_t at; (at = clash.find("shared_projection")) != std::string::npos;)
    clash.replace(at, 17, "dense");
  EXPECT_THAT(importError(clash),
              HasSubstr("model 'siamese': two layers are named 'dense'"));
  // The tower's own list (the only one indented this deep) renamed.
  std::string noLayers =
      replaceOnce(siamese, "     \"layers\": [", "     \"layer_list\": [");
  EXPECT_THAT(importError(noLayers),
              HasSubstr("$.config.layers[3].config.layers: layer 'tower' "
                        "(Sequential): a nested model needs a list of "
                        "'layers'"));
}

/// tf.keras keeps a call's training=False (Keras 3 passes the model's mode
/// over it): kcc takes it where both modes compute the same.
TEST(KerasErrors, Keras2CallTrainingArgument) {
  std::string vision = readText("vision_keras2.json");
  std::string fixed = replaceOnce(
      vision, "\"conv2d\",\n       0,\n       0,\n       {}",
      "\"conv2d\",\n       0,\n       0,\n       {\"training\": false}");
  std::string msg = importError(fixed);
  EXPECT_THAT(msg, HasSubstr("bad.json: $.config.layers["));
  EXPECT_THAT(msg, HasSubstr("].inbound_nodes[0][0][3].training: layer "
                             "'batch_normalization' (BatchNormalization): a "
                             "call's own training argument is not supported"));
  // Frozen, the layer computes the same in both modes.
  std::string frozen = replaceOnce(
      fixed, "\"name\": \"batch_normalization\",\n     \"trainable\": true",
      "\"name\": \"batch_normalization\",\n     \"trainable\": false");
  EXPECT_NO_THROW(keras::importModelJson(frozen, "frozen.json"));
}

} // namespace
