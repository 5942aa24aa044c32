//===- BatchNormalizationTest.cpp - BatchNormalization and freezing, eager ===//
//
// Hand-computed results of BatchNormalization run eagerly: a training call
// normalizes by the batch's mean and biased variance and moves the moving
// statistics by Keras's rule; an inference call and a frozen layer use the
// moving statistics and leave them alone. setTrainable freezes every weight.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

// Two channels over a batch of 4: channel 0 is 1, 2, 3, 4 (mean 2.5,
// biased variance 1.25), channel 1 is 0, 0, 4, 4 (mean 2, variance 4).
NDArray batch() {
  return NDArray::fromVector({4, 2}, {1, 0, 2, 0, 3, 4, 4, 4});
}

TEST(BatchNormalization, TrainingUsesBatchStatisticsAndMovesTheMovingOnes) {
  BatchNormalization bn(-1, /*momentum=*/0.75, /*epsilon=*/0.25);
  Tensor y = bn(Tensor(batch()), /*training=*/true);
  std::vector<NDArray> w = bn.getWeights(); // gamma, beta, mean, variance
  ASSERT_EQ(w.size(), 4u);
  std::vector<double> out = y.array().toVector();
  double inv0 = 1 / std::sqrt(1.25 + 0.25), inv1 = 1 / std::sqrt(4 + 0.25);
  EXPECT_NEAR(out[0], (1 - 2.5) * inv0, 1e-6);
  EXPECT_NEAR(out[1], (0 - 2.0) * inv1, 1e-6);
  EXPECT_NEAR(out[6], (4 - 2.5) * inv0, 1e-6);
  // moving = moving * 0.75 + batch * 0.25, from mean 0 and variance 1.
  EXPECT_NEAR(w[2].at(0), 2.5 * 0.25, 1e-6);
  EXPECT_NEAR(w[2].at(1), 2.0 * 0.25, 1e-6);
  EXPECT_NEAR(w[3].at(0), 0.75 + 1.25 * 0.25, 1e-6);
  EXPECT_NEAR(w[3].at(1), 0.75 + 4.0 * 0.25, 1e-6);
}

TEST(BatchNormalization, InferenceAndFrozenUseTheMovingStatistics) {
  BatchNormalization bn(-1, 0.9, 1e-3, /*center=*/true, /*scale=*/true);
  bn(Tensor(batch()));                               // builds
  bn.setWeights({NDArray::fromVector({2}, {2, 3}),   // gamma
                 NDArray::fromVector({2}, {1, -1}),  // beta
                 NDArray::fromVector({2}, {1, 2}),   // moving_mean
                 NDArray::fromVector({2}, {4, 9})}); // moving_variance
  auto expectInference = [&](const Tensor &y) {
    std::vector<double> out = y.array().toVector();
    EXPECT_NEAR(out[0], (1 - 1) * 2 / std::sqrt(4 + 1e-3) + 1, 1e-6);
    EXPECT_NEAR(out[7], (4 - 2) * 3 / std::sqrt(9 + 1e-3) - 1, 1e-6);
    std::vector<NDArray> w = bn.getWeights();
    EXPECT_EQ(w[2].toVector(), (std::vector<double>{1, 2}));
    EXPECT_EQ(w[3].toVector(), (std::vector<double>{4, 9}));
  };
  expectInference(bn(Tensor(batch())));
  bn.setTrainable(false);
  EXPECT_FALSE(bn.trainable());
  for (const Weight &w : bn.impl()->weights())
    EXPECT_FALSE(w.trainable) << w.name;
  expectInference(bn(Tensor(batch()), /*training=*/true));
  bn.setTrainable(true);
  // gamma and beta train again; the moving statistics never do.
  std::vector<bool> trainable;
  for (const Weight &w : bn.impl()->weights())
    trainable.push_back(w.trainable);
  EXPECT_EQ(trainable, (std::vector<bool>{true, true, false, false}));
}

TEST(BatchNormalization, WeightsFollowCenterAndScale) {
  BatchNormalization bn(-1, 0.99, 1e-3, /*center=*/false, /*scale=*/false);
  bn(Tensor(batch()));
  EXPECT_EQ(bn.impl()->weights().size(), 2u);
  EXPECT_EQ(bn.impl()->weights()[0].name, "moving_mean");
}

TEST(BatchNormalization, OnlyTheLastAxis) {
  EXPECT_NE(errorOf([] {
              BatchNormalization(1)(
                  Tensor(NDArray::fromVector({1, 2, 1}, {1, 2})));
            }).find("axis 1 is not supported (only the last axis"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              BatchNormalization(-1, 0.99, 0.0);
            }).find("epsilon must be finite and > 0"),
            std::string::npos);
}

} // namespace

// Under mixed_bfloat16 Keras computes the statistics in float32: the mean
// of 256, 258, 260, 262 is 259 (between two bfloat16 values), the variance
// 5, and the moving mean 259 * 0.25 = 64.75 (not a bfloat16 value either).
// The output is the float32 result rounded to bfloat16 once.
TEST(BatchNormalization, MixedPolicyComputesTheStatisticsInFloat32) {
  BatchNormalization bn(-1, /*momentum=*/0.75, /*epsilon=*/0.25);
  bn.withDTypePolicy("mixed_bfloat16");
  NDArray x = NDArray::fromVector({4, 1}, {256, 258, 260, 262});
  Tensor y = bn(Tensor(x), /*training=*/true);
  EXPECT_EQ(y.dtype(), DType::BF16);
  std::vector<double> out = y.array().toVector();
  double inv = 1 / std::sqrt(5 + 0.25);
  for (int i = 0; i < 4; ++i) {
    double exact = (256 + 2 * i - 259) * inv;
    // One bfloat16 rounding: 2^-8 relative (8 significant bits).
    EXPECT_NEAR(out[i], exact, std::abs(exact) / 256) << i;
  }
  std::vector<NDArray> w = bn.getWeights();
  EXPECT_EQ(w[2].dtype(), DType::F32);
  EXPECT_EQ(w[2].at(0), 64.75);
  EXPECT_EQ(w[3].at(0), 0.75 + 5 * 0.25);
}

TEST(BatchNormalization, UncheckedLayersAreRefusedUnderMixedByName) {
  Layer group =
      GroupNormalization(1).named("gn").withDTypePolicy("mixed_bfloat16");
  std::string error = errorOf(
      [&] { group(Tensor(NDArray::fromVector({2, 2}, {1, 2, 3, 4}))); });
  EXPECT_NE(error.find("layer 'gn' (GroupNormalization): dtype policy "
                       "'mixed_bfloat16' is not supported for "
                       "GroupNormalization layers yet"),
            std::string::npos)
      << error;
}
