//===- WeightsTest.cpp - Weights from .keras and .h5 equal Keras's --------===//
//
// training.json (written by make_fixtures.py from the live Keras model)
// holds per-weight shapes, sums, sums of squares and first values, and the
// model's outputs on two Fashion-MNIST images. The imported weights must
// reproduce all of them, and running the imported model eagerly must
// reproduce Keras's outputs.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/keras/KerasTestUtil.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras_test;
namespace json = llvm::json;

namespace {

const json::Object &record(const json::Value &training, const char *model) {
  return *training.getAsObject()->getObject(model);
}

void expectChecksums(Model &model, const json::Object &rec) {
  const json::Array &expected = *rec.getArray("initial_weights");
  std::vector<Parameter> params = model.parameters();
  ASSERT_EQ(params.size(), expected.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const json::Object &e = *expected[i].getAsObject();
    const NDArray &v = params[i].value;
    SCOPED_TRACE(params[i].name);
    EXPECT_EQ(params[i].name,
              e.getString("layer")->str() + "/" + e.getString("name")->str());
    Shape shape;
    for (const json::Value &d : *e.getArray("shape"))
      shape.push_back(*d.getAsInteger());
    ASSERT_EQ(v.shape(), shape);
    double sum = 0, sumSq = 0;
    for (int64_t j = 0; j < v.numel(); ++j) {
      sum += v.at(j);
      sumSq += v.at(j) * v.at(j);
    }
    EXPECT_NEAR(sum, *e.getNumber("sum"), 1e-9 * v.numel() + 1e-9);
    EXPECT_NEAR(sumSq, *e.getNumber("sum_sq"), 1e-9 * v.numel() + 1e-9);
    const json::Array &first = *e.getArray("first");
    for (size_t j = 0; j < first.size(); ++j)
      EXPECT_EQ(v.at(j), *first[j].getAsNumber()); // float32 -> exact.
  }
}

/// The first two training images, pixels / 255, as [2, 28, 28, 1].
NDArray firstTwoImages(const json::Value &training) {
  const json::Array &pixels =
      *training.getAsObject()->getObject("batch")->getArray("pixels_first2");
  std::vector<double> values;
  for (const json::Value &image : pixels)
    for (const json::Value &p : *image.getAsArray())
      values.push_back(static_cast<float>(*p.getAsInteger()) / 255.0f);
  return NDArray::fromVector({2, 28, 28, 1}, values);
}

void expectKerasOutputs(Model &model, const json::Value &training,
                        const char *name) {
  Tensor y = model(Tensor(firstTwoImages(training)));
  const json::Array &rows =
      *record(training, name).getArray("initial_outputs_first2");
  ASSERT_EQ(y.shape(), (Shape{2, 10}));
  std::vector<double> got = y.toVector();
  for (size_t r = 0; r < 2; ++r)
    for (size_t c = 0; c < 10; ++c)
      EXPECT_NEAR(got[r * 10 + c], *(*rows[r].getAsArray())[c].getAsNumber(),
                  2e-5)
          << name << " output [" << r << ", " << c << "]";
}

TEST(KerasWeights, ArchivesHoldKerasInitialWeights) {
  json::Value training = readJson("training.json");
  for (const char *name : {"mlp", "cnn", "residual"}) {
    SCOPED_TRACE(name);
    keras::ImportedModel m =
        keras::importKerasArchive(fixture(std::string(name) + ".keras"));
    ASSERT_TRUE(m.weightsLoaded);
    expectChecksums(*m.model, record(training, name));
  }
}

TEST(KerasWeights, EagerOutputsMatchKeras) {
  json::Value training = readJson("training.json");
  for (const char *name : {"mlp", "cnn", "residual"}) {
    keras::ImportedModel m =
        keras::importKerasArchive(fixture(std::string(name) + ".keras"));
    expectKerasOutputs(*m.model, training, name);
  }
}

TEST(KerasWeights, LegacyH5FilesEqualTheArchive) {
  std::vector<NDArray> ref =
      keras::importKerasArchive(fixture("mlp.keras")).model->getWeights();
  for (const char *file : {"mlp_keras2.h5", "mlp_legacy.h5"}) {
    SCOPED_TRACE(file);
    std::vector<NDArray> got =
        keras::importKerasH5(fixture(file)).model->getWeights();
    ASSERT_EQ(got.size(), ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
      ASSERT_EQ(got[i].shape(), ref[i].shape());
      EXPECT_EQ(got[i].toVector(), ref[i].toVector());
    }
  }
}

TEST(KerasWeights, LoadIntoASpecImportedModel) {
  // to_json + a separate weights file, as model.to_json() and
  // model.save_weights() give them.
  keras::ImportedModel m =
      keras::importModelJson(readText("mlp_keras2.json"), "mlp_keras2.json");
  EXPECT_FALSE(m.weightsLoaded);
  keras::loadWeightsH5File(m, fixture("mlp_keras2.h5"));
  EXPECT_TRUE(m.weightsLoaded);
  expectChecksums(*m.model, record(readJson("training.json"), "mlp"));
}

} // namespace
