//===- RmsNormalizationTest.cpp - RMSNormalization and rms_scaling, eager -===//
//
// Hand-computed results of Keras's RMSNormalization (x over the root mean
// square of the axes, times the scale) and of LayerNormalization with
// rms_scaling (x over the standard deviation, not centred, times gamma),
// and the shapes Keras's broadcasting of the scale refuses.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

TEST(RMSNormalization, DividesByTheRootMeanSquareAndScales) {
  RMSNormalization rms({-1}, /*epsilon=*/0.5);
  NDArray x = NDArray::fromVector({2, 2}, {3, 4, -1, 0});
  rms(Tensor(x)); // builds the scale
  rms.setWeights({NDArray::fromVector({2}, {2, -1})});
  std::vector<double> out = rms(Tensor(x)).array().toVector();
  // Row 0: mean square 12.5; row 1: 0.5.
  double r0 = 1 / std::sqrt(12.5 + 0.5), r1 = 1 / std::sqrt(0.5 + 0.5);
  EXPECT_NEAR(out[0], 3 * r0 * 2, 1e-6);
  EXPECT_NEAR(out[1], 4 * r0 * -1, 1e-6);
  EXPECT_NEAR(out[2], -1 * r1 * 2, 1e-6);
  EXPECT_EQ(out[3], 0.0);
}

TEST(RMSNormalization, TwoAxesShareOneRootMeanSquareAndAScaleEach) {
  RMSNormalization rms({2, 1}, /*epsilon=*/0.0);
  NDArray x = NDArray::fromVector({1, 2, 2}, {1, 1, 1, 5});
  Tensor y = rms(Tensor(x));
  ASSERT_EQ(rms.impl()->weights()[0].shape, (Shape{2, 2}));
  double r = 1 / std::sqrt((1 + 1 + 1 + 25) / 4.0);
  std::vector<double> out = y.array().toVector();
  EXPECT_NEAR(out[0], r, 1e-6);
  EXPECT_NEAR(out[3], 5 * r, 1e-6);
}

TEST(RMSNormalization, AScaleThatDoesNotBroadcastFromTheLastAxisIsAnError) {
  // Keras's scale for axis 1 of [batch, 3, 4] is [3], which it multiplies
  // against the last axis (4).
  EXPECT_NE(errorOf([] {
              RMSNormalization({1})(
                  Tensor(NDArray::zeros({2, 3, 4}, DType::F32)));
            })
                .find("a scale of shape [3] (the sizes of its axes) does "
                      "not broadcast to the input [2, 3, 4] from its last "
                      "axis"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              RMSNormalization({0})(Tensor(NDArray::zeros({2, 3}, DType::F32)));
            }).find("axis 0 is not a non-batch axis of [2, 3]"),
            std::string::npos);
}

TEST(LayerNormalization, RmsScalingDividesByTheStandardDeviationOnly) {
  LayerNormalization ln(-1, /*epsilon=*/0.25, /*center=*/true, /*scale=*/false,
                        "zeros", "ones", /*rmsScaling=*/true);
  NDArray x = NDArray::fromVector({1, 2}, {1, 3});
  ln(Tensor(x));
  // gamma with rms_scaling even without scale; never beta.
  ASSERT_EQ(ln.impl()->weights().size(), 1u);
  EXPECT_EQ(ln.impl()->weights()[0].name, "gamma");
  ln.setWeights({NDArray::fromVector({2}, {2, 3})});
  std::vector<double> out = ln(Tensor(x)).array().toVector();
  double inv = 1 / std::sqrt(1 + 0.25); // variance of 1, 3
  EXPECT_NEAR(out[0], 1 * inv * 2, 1e-6);
  EXPECT_NEAR(out[1], 3 * inv * 3, 1e-6);
}

} // namespace
