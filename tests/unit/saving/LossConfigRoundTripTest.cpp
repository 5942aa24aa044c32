//===- LossConfigRoundTripTest.cpp - Losses out to Keras and back ---------===//
//
// Every loss fixture Keras 3 wrote (tests/fixtures/keras/losses): import,
// save with kcc's own compile_config, import again. The loss comes back
// with every argument, and a Loss object is written exactly as Keras wrote
// it (class, module and config), so Keras rebuilds the same loss.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/Saving.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace kcc;
using namespace kcc::saving_test;
namespace json = llvm::json;

namespace {

std::vector<std::string> lossFixtures() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(KCC_KERAS_FIXTURES "/losses", ec),
       end;
       !ec && it != end; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".keras")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

/// compile_config.loss of a model's config text.
json::Value lossEntry(const std::string &configJson) {
  llvm::Expected<json::Value> v = json::parse(configJson);
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return nullptr;
  }
  const json::Object *cc = v->getAsObject()->getObject("compile_config");
  const json::Value *loss = cc ? cc->get("loss") : nullptr;
  return loss ? *loss : json::Value(nullptr);
}

std::string text(const json::Value &v) {
  std::string out;
  llvm::raw_string_ostream(out) << v;
  return out;
}

TEST(LossConfigRoundTrip, EveryFixtureImportsSavesAndImportsTheSame) {
  std::vector<std::string> files = lossFixtures();
  ASSERT_GE(files.size(), 20u);
  std::string dir = tempDir();
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    keras::ImportedModel first = keras::importFile(file);
    ASSERT_TRUE(first.training);
    ASSERT_EQ(first.trainingError, "");
    keras::ModelState state;
    state.weights = first.model->getWeights();
    std::string out = dir + "/" + llvm::sys::path::filename(file).str();
    keras::saveKerasArchive(out, *first.model, state, *first.training);
    keras::ImportedModel second = keras::importFile(out);
    ASSERT_TRUE(second.training);
    EXPECT_EQ(second.trainingError, "");
    const LossConfig &a = first.training->loss, &b = second.training->loss;
    EXPECT_EQ(a.str(), b.str());
    EXPECT_EQ(a.fromLogits, b.fromLogits);
    json::Value keras = lossEntry(first.configJson);
    json::Value kcc = lossEntry(second.configJson);
    const json::Object *kerasObject = keras.getAsObject();
    const json::Object *kccObject = kcc.getAsObject();
    if (!kccObject) {
      // A name: the loss has every default, whichever form Keras wrote.
      EXPECT_EQ(a.str(), lossName(a.kind));
      EXPECT_EQ(llvm::cantFail(parseLoss(*kcc.getAsString())), a.kind);
      continue;
    }
    // The object Keras wrote, every key with Keras's value (kcc may write
    // more: Keras 3.15's Huber drops its delta).
    ASSERT_NE(kerasObject, nullptr) << "kcc wrote " << text(kcc);
    for (llvm::StringRef key : {"module", "class_name", "registered_name"})
      EXPECT_TRUE(*kerasObject->get(key) == *kccObject->get(key))
          << key.str() << ": Keras " << text(*kerasObject->get(key)) << ", kcc "
          << text(*kccObject->get(key));
    const json::Object &kerasConfig = *kerasObject->getObject("config");
    const json::Object &kccConfig = *kccObject->getObject("config");
    for (const auto &[key, value] : kerasConfig) {
      const json::Value *mine = kccConfig.get(key);
      ASSERT_NE(mine, nullptr) << "kcc writes no " << key.str();
      EXPECT_TRUE(value == *mine)
          << key.str() << ": Keras " << text(value) << ", kcc " << text(*mine);
    }
  }
}

// The stateful metric fixtures (tests/fixtures/keras/metrics/stateful):
// metric objects with arguments and instance names come back the same,
// saved as Keras's metric objects.
TEST(MetricConfigRoundTrip, StatefulMetricsImportSaveAndImportTheSame) {
  std::string dir = tempDir();
  // vector/: metrics whose value is a list (several thresholds,
  // average=None, class_aggregation=None).
  for (const char *name :
       {"binary", "categorical", "logits", "regression", "sparse", "multi",
        "vector/thresholds", "vector/classes", "vector/columns"}) {
    std::string file = std::string(KCC_KERAS_FIXTURES) + "/metrics/stateful/" +
                       name + ".keras";
    SCOPED_TRACE(file);
    keras::ImportedModel first = keras::importFile(file);
    ASSERT_TRUE(first.training);
    ASSERT_EQ(first.trainingError, "");
    ASSERT_GE(first.training->resultNames().size(), 2u);
    keras::ModelState state;
    state.weights = first.model->getWeights();
    std::string out =
        dir + "/" + llvm::sys::path::filename(name).str() + ".keras";
    keras::saveKerasArchive(out, *first.model, state, *first.training);
    keras::ImportedModel second = keras::importFile(out);
    ASSERT_TRUE(second.training);
    EXPECT_EQ(second.trainingError, "");
    EXPECT_EQ(first.training->metrics, second.training->metrics);
    for (size_t k = 0; k < first.training->outputs.size(); ++k)
      EXPECT_EQ(first.training->outputs[k].metrics,
                second.training->outputs[k].metrics);
    EXPECT_EQ(first.training->resultNames(), second.training->resultNames());
    // FBetaScore refuses an integer beta: kcc writes it as Keras's float.
    if (llvm::StringRef(name) == "vector/classes")
      EXPECT_NE(second.configJson.find("\"beta\":2.0"), std::string::npos)
          << second.configJson;
  }
}

} // namespace
