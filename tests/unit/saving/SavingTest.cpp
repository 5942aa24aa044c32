//===- SavingTest.cpp - .keras archives kcc writes, read back by kcc ------===//
//
// Train a few steps, save, reload with the importer: the predictions must
// be the same bits. The archive's parts are checked against what Keras 3
// writes (config keys, HDF5 layout), and errors must leave no output.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/Hdf5Writer.h"
#include "frontend/keras/ModelSpec.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"
#include "frontend/training/Jit.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/ZipWriter.h"

#include "llvm/Support/JSON.h"

#include <sys/stat.h>

using namespace kcc;
using namespace kcc::saving_test;
namespace json = llvm::json;

namespace {

TrainingConfig adam(int64_t batch) {
  TrainingConfig config;
  config.batch = batch;
  config.metrics = {"accuracy"};
  return config;
}

/// Trains `model` `steps` steps on random batches; returns the executable.
Executable trainSteps(Model &model, const TrainingConfig &config, int steps) {
  JitOptions quiet;
  quiet.log = nullptr;
  Executable exe = jit(model, config, quiet);
  Shape xs{config.batch};
  std::vector<Shape> inputs = model.inputShapes();
  xs.insert(xs.end(), inputs[0].begin(), inputs[0].end());
  for (int i = 0; i < steps; ++i)
    exe.step(randomImages(xs, 100 + i), randomLabels(config.batch, 3, 200 + i));
  return exe;
}

NDArray predictWith(Model &model, const NDArray &x) {
  Executable exe = jitInference(model, 4, ExecMode::Compiled, nullptr);
  return exe.predict(x);
}

json::Value archiveJson(const std::string &path, const char *member) {
  std::optional<std::string> text =
      keras::readArchiveMember(path, member, 1 << 26);
  EXPECT_TRUE(text) << member;
  return cantFail(json::parse(text ? *text : "{}"));
}

TEST(Saving, TrainedCnnReloadsWithIdenticalPredictions) {
  std::string dir = tempDir();
  std::string path = dir + "/cnn.keras";
  Sequential model = makeCnn();
  TrainingConfig config = adam(8);
  Executable exe = trainSteps(model, config, 5);
  keras::saveKerasArchive(path, model, captureState(exe, /*epoch=*/1), config);

  NDArray x = randomImages({10, 8, 8, 1}, 9);
  NDArray expected = exe.predict(x);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_TRUE(ckpt.imported.weightsLoaded);
  NDArray got = predictWith(*ckpt.imported.model, x);
  expectIdentical(expected, got, "predictions after reload");

  // The state that comes back is the state that went in.
  EXPECT_EQ(ckpt.epoch, 1);
  ASSERT_TRUE(ckpt.optimizer);
  EXPECT_EQ(ckpt.optimizer->iterations, 5);
  EXPECT_FLOAT_EQ(ckpt.optimizer->learningRate, 1e-3);
  std::vector<NDArray> slots = exe.getOptimizerState();
  ASSERT_EQ(ckpt.optimizer->slots.size(), slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    expectIdentical(slots[i], ckpt.optimizer->slots[i], "slot");
  ASSERT_TRUE(ckpt.imported.training);
  EXPECT_EQ(ckpt.imported.training->optimizer.kind, OptimizerKind::Adam);
  EXPECT_EQ(ckpt.imported.training->metrics,
            std::vector<std::string>{"accuracy"});

  // Keras 3's layout: the layers Keras's model.layers lists, counters per
  // class, the InputLayer first in the config.
  json::Value config3 = archiveJson(path, "config.json");
  const json::Object &top = *config3.getAsObject();
  EXPECT_EQ(top.getString("class_name"), "Sequential");
  const json::Array &layers = *top.getObject("config")->getArray("layers");
  ASSERT_EQ(layers.size(), 7u);
  EXPECT_EQ(layers[0].getAsObject()->getString("class_name"), "InputLayer");
  EXPECT_EQ(layers[1].getAsObject()->getObject("config")->getInteger("filters"),
            4);
  EXPECT_EQ(top.getObject("compile_config")
                ->getObject("optimizer")
                ->getString("class_name"),
            "Adam");
  json::Value meta = archiveJson(path, "metadata.json");
  EXPECT_EQ(meta.getAsObject()->getString("keras_version"), "3.15.1");
}

// Layers whose config kcc generates (no imported config text to keep):
// BatchNormalization, ReLU with its three arguments, LeakyReLU and global
// pooling reload into the same model and the same predictions.
TEST(Saving, GeneratedConfigsOfNormalizationActivationAndPoolingReload) {
  std::string dir = tempDir();
  std::string path = dir + "/vision.keras";
  Sequential model(
      {Input({6, 6, 2}), Conv2D(4, 3, 1, "same"), BatchNormalization(),
       ReLU(6.0, 0.1, 0.05), Conv2D(3, 3, 1, "same"), LeakyReLU(0.2),
       GlobalAveragePooling2D(/*keepdims=*/false), Dense(3, "softmax")},
      "vision", 5);
  TrainingConfig config = adam(4);
  Executable exe = trainSteps(model, config, 3);
  keras::saveKerasArchive(path, model, captureState(exe, /*epoch=*/1), config);

  NDArray x = randomImages({5, 6, 6, 2}, 11);
  NDArray expected = exe.predict(x);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_TRUE(ckpt.imported.weightsLoaded);
  expectIdentical(expected, predictWith(*ckpt.imported.model, x),
                  "predictions after reload");

  json::Value saved = archiveJson(path, "config.json");
  const json::Array &layers =
      *saved.getAsObject()->getObject("config")->getArray("layers");
  ASSERT_EQ(layers.size(), 8u);
  auto layerConfig = [&](size_t i, llvm::StringRef cls) {
    const json::Object &entry = *layers[i].getAsObject();
    EXPECT_EQ(entry.getString("class_name"), cls);
    return *entry.getObject("config");
  };
  json::Object relu = layerConfig(3, "ReLU");
  EXPECT_EQ(relu.getNumber("max_value"), 6.0);
  EXPECT_EQ(relu.getNumber("negative_slope"), 0.1);
  EXPECT_EQ(relu.getNumber("threshold"), 0.05);
  EXPECT_EQ(layerConfig(5, "LeakyReLU").getNumber("negative_slope"), 0.2);
  json::Object pool = layerConfig(6, "GlobalAveragePooling2D");
  EXPECT_EQ(pool.getBoolean("keepdims"), false);
  EXPECT_EQ(pool.getString("data_format"), "channels_last");
  EXPECT_EQ(layerConfig(2, "BatchNormalization").getNumber("momentum"), 0.99);
}

// The convolution layers' generated configs (Keras 3's get_config keys)
// reload into the same model and the same predictions.
TEST(Saving, GeneratedConfigsOfConvolutionLayersReload) {
  std::string dir = tempDir();
  std::string path = dir + "/convs.keras";
  Sequential model({Input({9, 9, 2}), Conv2D(4, 3, 2, "same", 1, 2, "relu"),
                    Conv2D(4, 2, 1, "same", 2, 1),
                    DepthwiseConv2D(3, 1, "valid", 2, 1, "relu"),
                    SeparableConv2D(4, 2, 1, "same", 2, 2),
                    Conv2DTranspose(3, 3, 2, "valid", 1, "relu", false),
                    Flatten(), Dense(3, "softmax")},
                   "convs", 5);
  TrainingConfig config = adam(4);
  Executable exe = trainSteps(model, config, 3);
  keras::saveKerasArchive(path, model, captureState(exe, /*epoch=*/1), config);

  NDArray x = randomImages({5, 9, 9, 2}, 12);
  NDArray expected = exe.predict(x);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_TRUE(ckpt.imported.weightsLoaded);
  expectIdentical(expected, predictWith(*ckpt.imported.model, x),
                  "predictions after reload");

  json::Value saved = archiveJson(path, "config.json");
  const json::Array &layers =
      *saved.getAsObject()->getObject("config")->getArray("layers");
  ASSERT_EQ(layers.size(), 8u);
  auto layerConfig = [&](size_t i, llvm::StringRef cls) {
    const json::Object &entry = *layers[i].getAsObject();
    EXPECT_EQ(entry.getString("class_name"), cls);
    return *entry.getObject("config");
  };
  auto pair = [](const json::Object &c, llvm::StringRef key) {
    const json::Array *a = c.getArray(key);
    return a && a->size() == 2 ? std::make_pair(*(*a)[0].getAsInteger(),
                                                *(*a)[1].getAsInteger())
                               : std::make_pair(int64_t(-1), int64_t(-1));
  };
  json::Object grouped = layerConfig(1, "Conv2D");
  EXPECT_EQ(grouped.getInteger("groups"), 2);
  EXPECT_EQ(pair(grouped, "strides"), std::make_pair(int64_t(2), int64_t(2)));
  EXPECT_EQ(pair(layerConfig(2, "Conv2D"), "dilation_rate"),
            std::make_pair(int64_t(2), int64_t(2)));
  json::Object depthwise = layerConfig(3, "DepthwiseConv2D");
  EXPECT_EQ(depthwise.getInteger("depth_multiplier"), 2);
  EXPECT_TRUE(depthwise.getObject("depthwise_initializer"));
  EXPECT_FALSE(depthwise.get("kernel_initializer"));
  json::Object separable = layerConfig(4, "SeparableConv2D");
  EXPECT_EQ(separable.getInteger("filters"), 4);
  EXPECT_EQ(separable.getInteger("depth_multiplier"), 2);
  EXPECT_EQ(pair(separable, "dilation_rate"),
            std::make_pair(int64_t(2), int64_t(2)));
  EXPECT_TRUE(separable.getObject("pointwise_initializer"));
  json::Object transpose = layerConfig(5, "Conv2DTranspose");
  EXPECT_EQ(transpose.getBoolean("use_bias"), false);
  EXPECT_EQ(transpose.getString("padding"), "valid");
  ASSERT_TRUE(transpose.get("output_padding"));
  EXPECT_EQ(*transpose.get("output_padding"), json::Value(nullptr));
}

// TimeDistributed (of a layer and of a Sequential) and the 3-D layers
// built in C++: the generated config nests the wrapped layers as Keras 3
// does (a Sequential's layers under its own config), the weights go to the
// wrapped layers' groups, and all reload into the same predictions.
TEST(Saving, TimeDistributedAndVolumeLayersReload) {
  std::string dir = tempDir();
  std::string path = dir + "/volumes.keras";
  Tensor in = Input({4, 6, 6, 1}, DType::F32, "clip");
  Tensor v = Conv3D(3, Size3(2, 3, 3), 1, "same", 1, "relu")(in);
  v = ZeroPadding3D(Sides3({1, 0}, {0, 1}, {1, 1}))(v);
  v = Cropping3D(Sides3(0, 1, 0))(v); // [5, 5, 8, 3]
  Tensor a = GlobalMaxPooling3D()(
      UpSampling3D(Size3(1, 2, 1))(MaxPooling3D(2, std::nullopt, "same")(v)));
  Tensor b = GlobalAveragePooling3D()(Conv3DTranspose(2, 2, Size3(2, 1, 1))(
      AveragePooling3D(Size3(2, 2, 3), 1, "valid")(v)));
  Tensor frames = TimeDistributed({Conv2D(2, 3), Flatten(), Dense(4, "tanh")},
                                  "frame_model")(in); // [4, 4]
  Tensor steps = Flatten()(TimeDistributed(Dense(2))(frames));
  Tensor out = Dense(3, "softmax")(Concatenate()({a, b, steps}));
  Model model(in, out, "volumes", 9);
  TrainingConfig config = adam(4);
  Executable exe = trainSteps(model, config, 3);
  keras::saveKerasArchive(path, model, captureState(exe), config);

  NDArray x = randomImages({5, 4, 6, 6, 1}, 14);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_TRUE(ckpt.imported.weightsLoaded);
  expectIdentical(exe.predict(x), predictWith(*ckpt.imported.model, x),
                  "predictions after reload");

  json::Value saved = archiveJson(path, "config.json");
  std::vector<const json::Object *> wrapped;
  const json::Object *conv3d = nullptr;
  for (const json::Value &l :
       *saved.getAsObject()->getObject("config")->getArray("layers")) {
    const json::Object &entry = *l.getAsObject();
    const json::Object &c = *entry.getObject("config");
    if (entry.getString("class_name") == "TimeDistributed")
      wrapped.push_back(c.getObject("layer"));
    if (entry.getString("class_name") == "Conv3D")
      conv3d = &c;
  }
  ASSERT_EQ(wrapped.size(), 2u);
  ASSERT_TRUE(wrapped[0] && wrapped[1]);
  EXPECT_EQ(wrapped[0]->getString("class_name"), "Sequential");
  const json::Array *inner =
      wrapped[0]->getObject("config")->getArray("layers");
  ASSERT_TRUE(inner);
  std::vector<std::string> classes;
  for (const json::Value &l : *inner)
    classes.push_back(l.getAsObject()->getString("class_name")->str());
  EXPECT_EQ(classes, (std::vector<std::string>{"Conv2D", "Flatten", "Dense"}));
  EXPECT_EQ(wrapped[1]->getString("class_name"), "Dense");
  ASSERT_TRUE(conv3d);
  EXPECT_EQ(*conv3d->get("kernel_size"), (json::Value(json::Array{2, 3, 3})));
}

TEST(Saving, FunctionalModelRoundTripsInKerasLayerOrder) {
  std::string dir = tempDir();
  std::string path = dir + "/branches.keras";
  // Add's first argument is the short branch: a walk from the output
  // meets dense_b first, but Keras lists layers by depth (dense_a1 is
  // deeper), and numbers weight groups and optimizer slots that way.
  Tensor in = Input({6}, DType::F32, "features");
  Tensor b = Dense(5, "tanh").named("dense_b")(in);
  Tensor a = Dense(5).named("dense_a2")(Dense(7, "relu").named("dense_a1")(in));
  Tensor s = Add()({b, a});
  Tensor out = Dense(3, "softmax").named("head")(s);
  Model model(in, out, "branches", 3);
  EXPECT_EQ(keras::kerasLayerOrder(model),
            (std::vector<std::string>{"dense_a1", "dense_b", "dense_a2", "add",
                                      "head"}));
  TrainingConfig config = adam(4);
  Executable exe = trainSteps(model, config, 3);
  keras::saveKerasArchive(path, model, captureState(exe), config);

  json::Value cfg = archiveJson(path, "config.json");
  EXPECT_EQ(cfg.getAsObject()->getString("class_name"), "Functional");
  NDArray x = randomImages({7, 6}, 4);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  expectIdentical(exe.predict(x), predictWith(*ckpt.imported.model, x),
                  "functional predictions after reload");
  // Slots go out in Keras's order and come back in kcc's.
  ASSERT_TRUE(ckpt.optimizer);
  std::vector<NDArray> slots = exe.getOptimizerState();
  ASSERT_EQ(slots.size(), ckpt.optimizer->slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    expectIdentical(slots[i], ckpt.optimizer->slots[i],
                    "slot " + std::to_string(i));
}

// A transformer block built in C++: MultiHeadAttention's weights go to its
// sublayers' groups and its causal mask to the node's kwargs, the
// LayerNormalization config is generated, and all reload into the same
// predictions.
TEST(Saving, AttentionAndLayerNormalizationReload) {
  std::string dir = tempDir();
  std::string path = dir + "/block.keras";
  Tensor in = Input({5, 6}, DType::F32, "steps");
  Tensor a = MultiHeadAttention(2, 3, 0, true, {}, /*useCausalMask=*/true)
                 .named("attention")({in, in});
  Tensor h = LayerNormalization(-1, 1e-6).named("norm")(Add()({in, a}));
  Tensor out = Dense(3, "softmax")(GlobalAveragePooling1D()(h));
  Model model(in, out, "block", 7);
  TrainingConfig config = adam(4);
  Executable exe = trainSteps(model, config, 3);
  keras::saveKerasArchive(path, model, captureState(exe), config);

  NDArray x = randomImages({3, 5, 6}, 12);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_TRUE(ckpt.imported.weightsLoaded);
  expectIdentical(exe.predict(x), predictWith(*ckpt.imported.model, x),
                  "attention predictions after reload");
  EXPECT_TRUE(usesCausalMask(ckpt.imported.model->getLayer("attention")));

  json::Value cfg = archiveJson(path, "config.json");
  bool sawAttention = false;
  for (const json::Value &l :
       *cfg.getAsObject()->getObject("config")->getArray("layers")) {
    const json::Object &entry = *l.getAsObject();
    if (entry.getString("class_name") == "LayerNormalization") {
      EXPECT_EQ(entry.getObject("config")->getNumber("epsilon"), 1e-6);
    }
    if (entry.getString("class_name") != "MultiHeadAttention")
      continue;
    sawAttention = true;
    const json::Object &node =
        *(*entry.getArray("inbound_nodes"))[0].getAsObject();
    EXPECT_EQ(node.getArray("args")->size(), 2u);
    EXPECT_EQ(node.getObject("kwargs")->getBoolean("use_causal_mask"), true);
    EXPECT_EQ(entry.getObject("config")->getInteger("num_heads"), 2);
  }
  EXPECT_TRUE(sawAttention);
}

TEST(Saving, KerasThreeImportKeepsItsConfigText) {
  std::string dir = tempDir();
  keras::ImportedModel imported =
      keras::importFile(std::string(KCC_KERAS_FIXTURES) + "/mlp.keras");
  std::string path = dir + "/mlp.keras";
  keras::ModelState state{imported.model->getWeights(), std::nullopt, 0};
  keras::saveKerasArchive(path, imported, state);
  std::optional<std::string> text =
      keras::readArchiveMember(path, "config.json", 1 << 26);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, imported.configJson);

  // A changed learning rate rewrites compile_config only.
  TrainingConfig changed = imported.training.value_or(TrainingConfig());
  changed.optimizer.learningRate = 0.125;
  keras::saveKerasArchive(path, imported, state, changed);
  keras::ImportedModel back = keras::importFile(path);
  ASSERT_TRUE(back.training);
  EXPECT_EQ(back.training->optimizer.learningRate, 0.125);
  EXPECT_EQ(back.specLayerOrder, imported.specLayerOrder);
}

TEST(Saving, KerasTwoH5SavesAsKerasThree) {
  std::string dir = tempDir();
  keras::ImportedModel imported =
      keras::importFile(std::string(KCC_KERAS_FIXTURES) + "/mlp_keras2.h5");
  ASSERT_EQ(imported.kerasMajorVersion, 2);
  std::string path = dir + "/mlp3.keras";
  keras::ModelState state{imported.model->getWeights(), std::nullopt, 0};
  keras::saveKerasArchive(path, imported, state);
  json::Value cfg = archiveJson(path, "config.json");
  EXPECT_EQ(cfg.getAsObject()->getString("module"), "keras");
  keras::ImportedModel back = keras::importFile(path);
  EXPECT_EQ(back.kerasMajorVersion, 3);
  std::vector<NDArray> w0 = imported.model->getWeights(),
                       w1 = back.model->getWeights();
  ASSERT_EQ(w0.size(), w1.size());
  for (size_t i = 0; i < w0.size(); ++i)
    expectIdentical(w0[i], w1[i], "weight " + std::to_string(i));
}

TEST(Saving, WeightsAloneLoadIntoTheSameModel) {
  std::string dir = tempDir();
  std::string path = dir + "/cnn.weights.h5";
  Sequential model = makeCnn();
  Executable exe = trainSteps(model, adam(8), 2);
  keras::saveWeightsH5(path, model, captureState(exe));
  keras::ImportedModel fresh;
  fresh.model = std::make_unique<Sequential>(makeCnn(/*seed=*/99));
  for (const Layer &l : fresh.model->layers())
    fresh.specLayerOrder.push_back(l.name());
  keras::loadWeightsH5File(fresh, path);
  std::vector<NDArray> want = exe.getWeights(), got = fresh.model->getWeights();
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i)
    expectIdentical(want[i], got[i], "weight " + std::to_string(i));
}

TEST(Saving, ErrorsLeaveThePreviousFileAndNoTemporary) {
  std::string dir = tempDir();
  std::string path = dir + "/m.keras";
  Sequential model = makeCnn();
  keras::ModelState good{model.getWeights(), std::nullopt, 0};
  keras::saveKerasArchive(path, model, good, std::nullopt);
  struct stat before;
  ASSERT_EQ(::stat(path.c_str(), &before), 0);

  // One weight short: refused before anything is written.
  keras::ModelState bad = good;
  bad.weights.pop_back();
  try {
    keras::saveKerasArchive(path, model, bad, std::nullopt);
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("weight arrays for a model with"),
              std::string::npos)
        << e.what();
  }
  // An unwritable destination names the path.
  try {
    keras::saveKerasArchive(dir + "/missing/dir/m.keras", model, good,
                            std::nullopt);
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("missing/dir/m.keras: cannot write"),
              std::string::npos)
        << e.what();
  }
  struct stat after;
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(before.st_size, after.st_size);
  std::error_code ec;
  int entries = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    ++entries;
  EXPECT_EQ(entries, 1) << "a temporary was left in " << dir;
  keras::loadCheckpoint(path); // Still a valid archive.
}

} // namespace

namespace {

TEST(Saving, AnArchiveKerasWroteLoadsWithoutOptimizerState) {
  keras::Checkpoint ckpt =
      keras::loadCheckpoint(std::string(KCC_KERAS_FIXTURES) + "/mlp.keras");
  EXPECT_TRUE(ckpt.imported.weightsLoaded);
  EXPECT_EQ(ckpt.epoch, 0);
  EXPECT_FALSE(ckpt.optimizer) << "no kcc metadata, so no step count";
}

TEST(Saving, OptimizerSlotsThatDoNotFitTheModelAreNamed) {
  // A hand-made archive: the right weights, one Adam slot of a wrong shape.
  std::string dir = tempDir();
  std::string path = dir + "/bad-slots.keras";
  Sequential model({Input({3}), Dense(2)}, "tiny", 1);
  std::vector<NDArray> w = model.getWeights();
  keras::Hdf5Writer h5(path);
  h5.createGroup("layers/dense/vars");
  h5.setStringAttr("layers/dense/vars", "name", "dense");
  h5.writeDataset("layers/dense/vars/0", w[0]);
  h5.writeDataset("layers/dense/vars/1", w[1]);
  h5.createGroup("optimizer/vars");
  h5.writeDataset("optimizer/vars/0", NDArray::scalar(4, DType::I64));
  h5.writeDataset("optimizer/vars/1", NDArray::scalar(1e-3));
  h5.writeDataset("optimizer/vars/2", NDArray::zeros({3, 2}, DType::F32));
  h5.writeDataset("optimizer/vars/3", NDArray::zeros({3, 2}, DType::F32));
  h5.writeDataset("optimizer/vars/4", NDArray::zeros({2}, DType::F32));
  h5.writeDataset("optimizer/vars/5", NDArray::zeros({5}, DType::F32));
  TrainingConfig config;
  std::string cfg = keras::kerasConfigJson(model, config);
  writeFileAtomically(path, [&](const std::string &tmp) {
    ZipWriter zip(tmp, path);
    zip.add("metadata.json", R"({"kcc": {"epoch": 1, "iterations": 4}})");
    zip.add("config.json", cfg);
    zip.add("model.weights.h5", h5.image());
    zip.close();
  });
  try {
    keras::loadCheckpoint(path);
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "bad-slots.keras:model.weights.h5: optimizer/vars/5: a slot "
                  "of weight 'bias' [2] is [5]"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
