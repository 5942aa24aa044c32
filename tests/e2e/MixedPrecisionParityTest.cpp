//===- MixedPrecisionParityTest.cpp - mixed_bfloat16 trains as Keras's ----===//
//
// The fixtures of scripts/keras-fixtures/make_mixed_fixtures.py, written by
// Keras 3 on JAX under the mixed_bfloat16 dtype policy: an MLP whose last
// layer is a float32 softmax, and a CNN computing in bfloat16 up to its
// softmax. From Keras's weights on Keras's batch, compiled and interpreted,
// kcc must reproduce Keras's predict before training (the CNN's as bfloat16
// values) and the loss of each of 5 Adam steps within 2e-2 relative (bfloat16
// keeps 8 bits of mantissa: one rounding is up to 2^-9 relative, and the two
// computations round different intermediate values), and compiled and
// interpreted steps must agree more closely than either agrees with Keras.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/KerasImporter.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstring>

using namespace kcc;
namespace json = llvm::json;

namespace {

const json::Object &record(const std::string &name) {
  static json::Value root = e2e::readFixtureJson("mixed.json");
  const json::Object *r = root.getAsObject()->getObject(name);
  EXPECT_NE(r, nullptr) << name;
  return *r;
}

/// The 5 step losses of `name` in `mode`, from Keras's initial weights;
/// checks Keras's predict first.
std::vector<double> trainSteps(const std::string &name, ExecMode mode,
                               double *worstPredict) {
  const json::Object &rec = record(name);
  keras::ImportedModel imported =
      keras::importKerasArchive(e2e::kerasFixture(name + ".keras"));
  EXPECT_TRUE(imported.weightsLoaded);
  NDArray x, y;
  e2e::kerasBatch(x, y);
  Executable exe =
      e2e::jitQuietly(*imported.model, e2e::kerasAdamConfig(rec, mode));

  std::vector<double> expected;
  e2e::flattenNumbers(*rec.get("initial_predict"), expected);
  NDArray predicted = exe.predict(x);
  *worstPredict = 0;
  for (size_t i = 0; i < expected.size(); ++i)
    *worstPredict =
        std::max(*worstPredict, std::abs(predicted.at(i) - expected[i]));
  EXPECT_LE(*worstPredict, 2e-2) << name << " predict";
  // A model whose last layer computes in bf16 predicts bf16 values (Keras's
  // predict returns bfloat16 there): each is a float whose low 16 bits are
  // 0. Computing in f32 would not round them.
  if (*rec.getString("output_dtype") == "bfloat16")
    for (int64_t i = 0; i < predicted.numel(); ++i) {
      float v = static_cast<float>(predicted.at(i));
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof(bits));
      EXPECT_EQ(bits & 0xffffu, 0u) << name << " predict [" << i << "] " << v;
    }

  std::vector<double> losses;
  for (int s = 0; s < 5; ++s)
    losses.push_back(exe.step(x, y).loss);
  return losses;
}

class MixedPrecisionParity : public ::testing::TestWithParam<std::string> {};

TEST_P(MixedPrecisionParity, FiveStepsMatchKerasInBothModes) {
  const std::string &name = GetParam();
  std::vector<double> keras =
      e2e::numbers(*record(name).getArray("step_losses"));
  ASSERT_EQ(keras.size(), 5u);
  double predictC = 0, predictI = 0;
  std::vector<double> compiled =
      trainSteps(name, ExecMode::Compiled, &predictC);
  std::vector<double> interpreted =
      trainSteps(name, ExecMode::Interpreted, &predictI);
  double worstC = 0, worstI = 0, worstCI = 0;
  for (size_t s = 0; s < keras.size(); ++s) {
    double relC = std::abs(compiled[s] - keras[s]) / std::abs(keras[s]);
    double relI = std::abs(interpreted[s] - keras[s]) / std::abs(keras[s]);
    double relCI =
        std::abs(compiled[s] - interpreted[s]) / std::abs(interpreted[s]);
    EXPECT_LE(relC, 2e-2) << name << " compiled step " << s << ": Keras "
                          << keras[s] << ", kcc " << compiled[s];
    EXPECT_LE(relI, 2e-2) << name << " interpreted step " << s << ": Keras "
                          << keras[s] << ", kcc " << interpreted[s];
    EXPECT_LE(relCI, 5e-3) << name << " step " << s << ": compiled "
                           << compiled[s] << ", interpreted " << interpreted[s];
    worstC = std::max(worstC, relC);
    worstI = std::max(worstI, relI);
    worstCI = std::max(worstCI, relCI);
  }
  std::printf("%s: losses vs Keras, worst relative: compiled %.2e, "
              "interpreted %.2e; compiled vs interpreted %.2e; predict "
              "worst abs: compiled %.2e, interpreted %.2e\n",
              name.c_str(), worstC, worstI, worstCI, predictC, predictI);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, MixedPrecisionParity,
                         ::testing::Values("mixed_mlp", "mixed_cnn"));

} // namespace
