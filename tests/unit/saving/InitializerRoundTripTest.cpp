//===- InitializerRoundTripTest.cpp - Initializers back to Keras ----------===//
//
// kcc writes each layer's initializers as Keras 3 serializes them
// (class_name and get_config() with its arguments): every .keras fixture,
// saved from the config kcc generates, has initializer entries equal to
// the ones Keras wrote (seeds and shared_object_ids aside),
// initializers.keras's
// RandomNormal, TruncatedNormal, RandomUniform, Constant, VarianceScaling,
// Identity and Orthogonal(gain) included; read back, the layers hold the
// same initializers.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/ModelSpec.h"
#include "frontend/keras/Saving.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

using namespace kcc;
using namespace kcc::saving_test;
namespace json = llvm::json;

namespace {

json::Value archiveConfig(const std::string &path) {
  std::optional<std::string> text =
      keras::readArchiveMember(path, "config.json", 1 << 26);
  EXPECT_TRUE(text) << path;
  return cantFail(json::parse(text ? *text : "{}"));
}

/// The `*_initializer` entries of every layer (a nested model's included,
/// and a Bidirectional's wrapped layers), keyed "layer/key", without "seed"
/// (kcc keeps none) and "shared_object_id" (Keras's count of a Functional's
/// shared objects).
llvm::StringMap<json::Value> initializerEntries(const json::Value &config) {
  llvm::StringMap<json::Value> out;
  std::function<void(const json::Object &, const std::string &)> visit =
      [&](const json::Object &layerConfig, const std::string &name) {
        for (const auto &kv : layerConfig) {
          std::string key = kv.first.str();
          if (llvm::StringRef(key).ends_with("_initializer")) {
            json::Value v = kv.second;
            if (json::Object *o = v.getAsObject()) {
              // Keras's bookkeeping of objects a Functional config shares.
              o->erase("shared_object_id");
              if (json::Object *c = o->getObject("config"))
                c->erase("seed");
            }
            out.try_emplace(name + "/" + key, std::move(v));
          }
        }
        for (const char *wrapped : {"layer", "backward_layer"})
          if (const json::Object *inner = layerConfig.getObject(wrapped))
            if (const json::Object *c = inner->getObject("config"))
              visit(*c, name + "/" + wrapped);
      };
  // A nested model's (and a Pipeline's) layers are keyed as kcc's flat
  // config keys them.
  std::function<void(const json::Array &)> visitLayers =
      [&](const json::Array &layers) {
        for (const json::Value &layer : layers) {
          const json::Object &entry = *layer.getAsObject();
          const json::Object *c = entry.getObject("config");
          std::optional<llvm::StringRef> cls = entry.getString("class_name");
          if (!c || cls == "InputLayer")
            continue;
          if (cls && keras::isModelClass(*cls))
            visitLayers(*c->getArray("layers"));
          else
            visit(*c, c->getString("name")->str());
        }
      };
  visitLayers(*config.getAsObject()->getObject("config")->getArray("layers"));
  return out;
}

std::string show(const json::Value &v) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << v;
  return s;
}

/// Every layer's initializers, as kcc holds them (text forms).
std::map<std::string, std::string> heldInitializers(Model &model) {
  std::map<std::string, std::string> out;
  for (const Layer &layer : model.layers())
    for (const auto &kv : layer.impl()->kerasConfig())
      if (llvm::StringRef(kv.first).ends_with("_initializer"))
        if (std::optional<llvm::StringRef> s = kv.second.getAsString())
          out[layer.name() + "/" + kv.first.str()] = s->str();
  return out;
}

TEST(InitializerRoundTrip, SavedInitializersEqualKerasOnes) {
  std::string dir = tempDir();
  int archives = 0;
  size_t entries = 0;
  std::set<std::string> classes;
  for (const std::string &path : kerasFixtures()) {
    keras::ImportedModel imported;
    try {
      imported = keras::importFile(path);
    } catch (const Error &) {
      continue; // the error fixtures (FixtureRoundTrip lists them)
    }
    SCOPED_TRACE(path);
    Model &model = *imported.model;
    std::string saved = dir + "/" + llvm::sys::path::filename(path).str();
    // The Model overload: kcc's generated config, never the source text.
    keras::saveKerasArchive(
        saved, model, keras::ModelState{model.getWeights(), std::nullopt, 0},
        imported.training);
    llvm::StringMap<json::Value> want = initializerEntries(archiveConfig(path));
    llvm::StringMap<json::Value> got = initializerEntries(archiveConfig(saved));
    EXPECT_EQ(want.size(), got.size());
    for (const auto &kv : want) {
      auto it = got.find(kv.first());
      if (it == got.end()) {
        ADD_FAILURE() << kv.first().str() << " not saved";
        continue;
      }
      EXPECT_EQ(it->second, kv.second)
          << kv.first().str() << ": kcc wrote " << show(it->second)
          << ", Keras " << show(kv.second);
      if (const json::Object *o = kv.second.getAsObject())
        if (std::optional<llvm::StringRef> cls = o->getString("class_name"))
          classes.insert(cls->str());
      ++entries;
    }
    // Read back, the layers hold the same initializers.
    keras::ImportedModel back = keras::importFile(saved);
    EXPECT_EQ(heldInitializers(*back.model), heldInitializers(model));
    ++archives;
  }
  llvm::sys::fs::remove_directories(dir);
  RecordProperty("archives", archives);
  RecordProperty("initializer_entries", static_cast<int>(entries));
  EXPECT_GE(archives, 30);
  EXPECT_GE(entries, 200u);
  for (const char *cls : {"GlorotUniform", "Zeros", "Ones", "Orthogonal",
                          "RandomUniform", "RandomNormal", "TruncatedNormal",
                          "Constant", "VarianceScaling", "Identity"})
    EXPECT_TRUE(classes.count(cls)) << cls << " is in no fixture";
}

TEST(InitializerRoundTrip, ArgumentsOfAModelBuiltInCpp) {
  // Arguments Keras's own archives cannot show: Identity's gain (Keras
  // 3.15.1's get_config() drops it; kcc writes it, Identity(**config)
  // reads it) and an LSTM's bias around the forget gate's ones.
  Sequential model(
      {Input({4, 6}),
       LSTM(8, "tanh", "sigmoid", true,
            "variance_scaling(scale=0.3,mode=fan_out,distribution=uniform)",
            "orthogonal(gain=2)", "constant(value=-0.5)"),
       Dense(8, "linear", true, "identity(gain=0.5)",
             "truncated_normal(mean=0.25,stddev=0.125)")},
      "cpp", 3);
  std::string dir = tempDir(), path = dir + "/cpp.keras";
  keras::saveKerasArchive(
      path, model, keras::ModelState{model.getWeights(), std::nullopt, 0},
      std::nullopt);
  llvm::StringMap<json::Value> saved = initializerEntries(archiveConfig(path));
  auto config = [&](const char *key) {
    auto it = saved.find(key);
    EXPECT_NE(it, saved.end()) << key;
    return it == saved.end() ? std::string() : show(it->second);
  };
  EXPECT_EQ(config("dense/kernel_initializer"),
            R"({"class_name":"Identity","config":{"gain":0.5},)"
            R"("module":"keras.initializers","registered_name":null})");
  EXPECT_EQ(config("dense/bias_initializer"),
            R"({"class_name":"TruncatedNormal","config":{"mean":0.25,)"
            R"("stddev":0.125},"module":"keras.initializers",)"
            R"("registered_name":null})");
  EXPECT_EQ(config("lstm/kernel_initializer"),
            R"({"class_name":"VarianceScaling","config":{"distribution":)"
            R"("uniform","input_axes":null,"mode":"fan_out",)"
            R"("output_axes":null,"scale":0.29999999999999999},)"
            R"("module":"keras.initializers","registered_name":null})");
  EXPECT_EQ(config("lstm/recurrent_initializer"),
            R"({"class_name":"Orthogonal","config":{"gain":2},)"
            R"("module":"keras.initializers","registered_name":null})");
  EXPECT_EQ(config("lstm/bias_initializer"),
            R"({"class_name":"Constant","config":{"value":-0.5},)"
            R"("module":"keras.initializers","registered_name":null})");
  keras::ImportedModel back = keras::importFile(path);
  EXPECT_EQ(heldInitializers(*back.model), heldInitializers(model));
  EXPECT_EQ(heldInitializers(model)["dense/kernel_initializer"],
            "identity(gain=0.5)");
  // The reloaded weights are the saved ones (not redrawn).
  std::vector<NDArray> a = model.getWeights(), b = back.model->getWeights();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    expectIdentical(a[i], b[i], "weight " + std::to_string(i));
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
