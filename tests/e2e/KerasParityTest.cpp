//===- KerasParityTest.cpp - kcc's step reproduces Keras's ----------------===//
//
// From Keras's own initial weights (the .keras fixtures) and on the batch
// Keras trained on (the first 32 Fashion-MNIST training images, the same
// batch at every step), kcc's compiled training step must reproduce the
// per-step losses Keras computed (training.json: the loss of each
// train_on_batch call, not fit()'s running mean) within 1e-4 relative over
// 5 Adam steps, and end at Keras's weights.
//
//===----------------------------------------------------------------------===//

#include "E2ETestUtil.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Jit.h"

#include "gtest/gtest.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <cstdio>

using namespace kcc;
namespace json = llvm::json;

namespace {

std::string fixture(const std::string &name) {
  return std::string(KCC_KERAS_FIXTURES) + "/" + name;
}

json::Value readTraining() {
  auto buf = llvm::MemoryBuffer::getFile(fixture("training.json"));
  if (!buf)
    throw Error("cannot read training.json");
  llvm::Expected<json::Value> v = json::parse((*buf)->getBuffer());
  if (!v)
    throw Error(llvm::toString(v.takeError()));
  return std::move(*v);
}

std::vector<double> numbers(const json::Array &array) {
  std::vector<double> out;
  for (const json::Value &v : array)
    out.push_back(*v.getAsNumber());
  return out;
}

class KerasParity : public ::testing::TestWithParam<std::string> {};

TEST_P(KerasParity, CompiledStepReproducesKerasLosses) {
  const std::string name = GetParam();
  json::Value training = readTraining();
  const json::Object &root = *training.getAsObject();
  const json::Object &record = *root.getObject(name);
  const json::Object &batchInfo = *root.getObject("batch");
  ASSERT_EQ(*root.getInteger("steps"), 5);
  ASSERT_TRUE(*root.getBoolean("same_batch_each_step"));

  keras::ImportedModel imported =
      keras::importKerasArchive(fixture(name + ".keras"));
  ASSERT_TRUE(imported.weightsLoaded);

  // The batch Keras trained on: training images 0..31, labels checked.
  const FashionMnist &data = e2e::fashionMnist();
  BatchIterator batches(data.train, 32, /*shuffle=*/false, /*seed=*/0);
  batches.startEpoch(0);
  NDArray x, y;
  batches.batch(0, x, y);
  std::vector<double> labels = numbers(*batchInfo.getArray("labels"));
  ASSERT_EQ(labels, y.toVector());

  const json::Object &opt = *record.getObject("optimizer");
  ASSERT_EQ(*opt.getString("name"), "adam");
  TrainingConfig o;
  o.batch = 32;
  o.optimizer.kind = OptimizerKind::Adam;
  o.optimizer.learningRate = *opt.getNumber("learning_rate");
  o.optimizer.beta1 = *opt.getNumber("beta_1");
  o.optimizer.beta2 = *opt.getNumber("beta_2");
  o.optimizer.epsilon = *opt.getNumber("epsilon");
  o.loss.kind = llvm::cantFail(parseLoss(*record.getString("loss")));
  o.loss.fromLogits = *record.getBoolean("from_logits");
  o.mode = ExecMode::Compiled;
  JitOptions quiet;
  quiet.log = nullptr;
  Executable exe = jit(*imported.model, o, quiet);

  std::vector<double> expected = numbers(*record.getArray("step_losses"));
  ASSERT_EQ(expected.size(), 5u);
  double worst = 0;
  for (size_t s = 0; s < expected.size(); ++s) {
    StepResult r = exe.step(x, y);
    double rel = std::abs(r.loss - expected[s]) / std::abs(expected[s]);
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-4) << name << " step " << s << ": Keras "
                         << expected[s] << ", kcc " << r.loss;
  }

  // And the weights Keras ended with (sum and first elements per variable).
  std::vector<NDArray> weights = exe.getWeights();
  const json::Array &finals = *record.getArray("final_weights");
  ASSERT_EQ(finals.size(), weights.size());
  double worstWeight = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    const json::Object &w = *finals[k].getAsObject();
    std::vector<double> first = numbers(*w.getArray("first"));
    for (size_t i = 0; i < first.size(); ++i) {
      double err = std::abs(weights[k].at(i) - first[i]);
      worstWeight = std::max(worstWeight, err);
      EXPECT_LE(err, 1e-5 + 1e-4 * std::abs(first[i]))
          << name << " " << w.getString("layer")->str() << "/"
          << w.getString("name")->str() << "[" << i << "]";
    }
  }
  std::printf("[ keras ] %s: 5 Adam steps, worst loss relative error %.2e, "
              "worst weight error %.2e\n",
              name.c_str(), worst, worstWeight);
}

INSTANTIATE_TEST_SUITE_P(KerasFixtures, KerasParity,
                         ::testing::Values("mlp", "cnn"),
                         [](const auto &info) { return info.param; });

} // namespace
