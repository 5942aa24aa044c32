//===- FixtureRoundTripTest.cpp - Every Keras fixture through kcc's config ===//
//
// Each .keras fixture under tests/fixtures/keras (recursively) is imported,
// saved as a Keras 3 archive from the config kcc generates for the model it
// built (not the imported config text), and read back: the reloaded model
// must predict the same bits and keep every regularizer and dtype policy. A
// fixture kcc cannot import is skipped only when it is listed below with the
// reason; a user's layer class is registered as examples/embed/ScaledDense.h
// does.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "engine/Executable.h"
#include "examples/embed/ScaledDense.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Jit.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>

using namespace kcc;
using namespace kcc::saving_test;

namespace {

/// Fixtures that are not models kcc imports, and why.
const llvm::StringMap<const char *> &notImportable() {
  static const llvm::StringMap<const char *> list = {
      {"bad_no_config.keras", "an archive without config.json (an error test)"},
      {"bad_weight_shape.keras",
       "weights whose shapes do not fit the config (an error test)"},
      {"layer.keras", "a custom layer class (an error test)"},
  };
  return list;
}

/// A batch for each input: floats in [0, 1), integer inputs (token ids)
/// in {0, 1}, valid for any vocabulary.
std::vector<NDArray> sampleInputs(Model &model, int64_t batch) {
  std::vector<NDArray> xs;
  std::vector<DType> dtypes = model.inputDTypes();
  for (auto [i, shape] : llvm::enumerate(model.inputShapes())) {
    Shape s{batch};
    s.insert(s.end(), shape.begin(), shape.end());
    NDArray x = randomImages(s, 31 + i);
    if (dtypes[i] == DType::I32 || dtypes[i] == DType::I64) {
      std::vector<double> ids(numElements(s));
      for (size_t j = 0; j < ids.size(); ++j)
        ids[j] = x.data<float>()[j] < 0.5f ? 0 : 1;
      x = NDArray::fromVector(s, ids, DType::I32);
    }
    if (x.dtype() != dtypes[i])
      x = x.to(dtypes[i]);
    xs.push_back(std::move(x));
  }
  return xs;
}

void expectSameRegularizer(const std::optional<Regularizer> &a,
                           const std::optional<Regularizer> &b,
                           const std::string &what) {
  ASSERT_EQ(a.has_value(), b.has_value()) << what;
  if (a) {
    EXPECT_EQ(a->l1, b->l1) << what;
    EXPECT_EQ(a->l2, b->l2) << what;
  }
}

std::vector<NDArray> predictInterpreted(Model &model,
                                        const std::vector<NDArray> &xs) {
  Executable exe =
      jitInference(model, xs[0].shape()[0], ExecMode::Interpreted, nullptr);
  return exe.predict(xs);
}

TEST(FixtureRoundTrip, EveryKerasFixtureReloadsFromKccsOwnConfig) {
  // custom/scaled_dense.keras holds a user's class: the C++ one the
  // embedding example registers for it.
  demo::registerScaledDense();
  std::vector<std::string> fixtures = kerasFixtures();
  ASSERT_GE(fixtures.size(), 10u)
      << "fixtures not found under " << KCC_KERAS_FIXTURES;
  std::string dir = tempDir();
  int roundTripped = 0, regularizers = 0, mixedLayers = 0;
  for (const std::string &path : fixtures) {
    std::string file = llvm::sys::path::filename(path).str();
    SCOPED_TRACE(path);
    auto skip = notImportable().find(file);
    keras::ImportedModel imported;
    try {
      imported = keras::importFile(path);
    } catch (const Error &e) {
      EXPECT_NE(skip, notImportable().end())
          << "kcc cannot import " << file << ": " << e.what();
      continue;
    }
    EXPECT_EQ(skip, notImportable().end())
        << file << " imports now: remove it from the skip list";
    Model &model = *imported.model;
    std::string saved = dir + "/" + file;
    keras::ModelState state{model.getWeights(), std::nullopt, 0};
    // The Model overload: kcc's generated config, never the source text.
    keras::saveKerasArchive(saved, model, state, imported.training);
    keras::ImportedModel back = keras::importFile(saved);
    ASSERT_TRUE(back.weightsLoaded) << file;
    EXPECT_EQ(back.specLayerOrder, keras::kerasLayerOrder(model)) << file;
    // What predictions cannot show: the regularizers training adds.
    for (const Layer &layer : model.layers()) {
      LayerImpl &was = *layer.impl();
      LayerImpl &now = *back.model->getLayer(layer.name()).impl();
      // The dtype policy each layer computes under (mixed_bfloat16 ones
      // too): saved as Keras writes it, read back the same.
      EXPECT_EQ(was.dtypePolicy(), now.dtypePolicy())
          << file << " " << layer.name();
      mixedLayers += was.dtypePolicy() == "mixed_bfloat16";
      regularizers += was.activityRegularizer().has_value();
      for (const std::string &name : was.regularizableWeights()) {
        std::string w = was.regularizedWeight(name);
        regularizers += was.weightRegularizer(w).has_value();
        expectSameRegularizer(was.weightRegularizer(w),
                              now.weightRegularizer(w),
                              file + " " + layer.name() + "/" + w);
      }
      expectSameRegularizer(was.activityRegularizer(),
                            now.activityRegularizer(),
                            file + " " + layer.name() + " activity");
    }

    std::vector<NDArray> xs = sampleInputs(model, 4);
    std::vector<NDArray> expected = predictInterpreted(model, xs);
    std::vector<NDArray> got = predictInterpreted(*back.model, xs);
    ASSERT_EQ(expected.size(), got.size()) << file;
    for (size_t k = 0; k < expected.size(); ++k)
      expectIdentical(expected[k], got[k],
                      file + " output " + std::to_string(k));
    ++roundTripped;
  }
  EXPECT_GE(regularizers, 8) << "regularized.keras's regularizers";
  EXPECT_GE(mixedLayers, 30) << "the mixed_*.keras fixtures' layers";
  EXPECT_EQ(roundTripped + static_cast<int>(notImportable().size()),
            static_cast<int>(fixtures.size()));
}

} // namespace
