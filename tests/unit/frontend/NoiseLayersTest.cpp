//===- NoiseLayersTest.cpp - GaussianNoise, GaussianDropout, AlphaDropout -===//
//
// The noise layers draw from kc.random_uniform (AlphaDropout) or the
// Box-Muller normal composed of kc ops (ops::randomNormal); Keras's stream
// differs, so the draws are checked against their distribution: mean,
// variance and the mass within one and two standard deviations of 40,000
// draws (the normal's cosine is a polynomial: a wrong one shows here), the
// same draws for the same step and others for the next, and the identity
// at inference. And StochasticDepth and Dropout's noise_shape, which drop
// whole slices.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;

namespace {

constexpr int64_t kN = 40000;

NDArray filled(double v) {
  return NDArray::fromVector({200, 200}, std::vector<double>(kN, v));
}

struct Moments {
  double mean = 0, variance = 0, within1 = 0, within2 = 0;
};

Moments momentsOf(const std::vector<double> &v) {
  Moments m;
  for (double x : v)
    m.mean += x / v.size();
  for (double x : v)
    m.variance += (x - m.mean) * (x - m.mean) / v.size();
  double sd = std::sqrt(m.variance);
  for (double x : v) {
    m.within1 += std::abs(x - m.mean) <= sd ? 1.0 / v.size() : 0;
    m.within2 += std::abs(x - m.mean) <= 2 * sd ? 1.0 / v.size() : 0;
  }
  return m;
}

TEST(NoiseLayers, RandomNormalIsStandardNormal) {
  CallContext at0, at1;
  at1.step = ops::full({}, 1, DType::I64);
  std::vector<double> z = ops::randomNormal({kN}, 17, at0.step).toVector();
  Moments m = momentsOf(z);
  // Standard errors: mean 0.005, variance 0.007, masses ~0.0023.
  EXPECT_NEAR(m.mean, 0.0, 0.02);
  EXPECT_NEAR(m.variance, 1.0, 0.03);
  EXPECT_NEAR(m.within1, 0.6827, 0.01);
  EXPECT_NEAR(m.within2, 0.9545, 0.01);
  for (double v : z)
    ASSERT_TRUE(std::isfinite(v));
  EXPECT_EQ(ops::randomNormal({kN}, 17, at0.step).toVector(), z);
  EXPECT_NE(ops::randomNormal({kN}, 17, at1.step).toVector(), z);
}

TEST(NoiseLayers, GaussianNoiseAndDropoutHaveTheirSpread) {
  NDArray twos = filled(2.0);
  GaussianNoise noise(0.3, 4);
  EXPECT_EQ(noise(twos, false).toVector(), Tensor(twos).toVector());
  Moments n = momentsOf(noise(twos, true).toVector());
  EXPECT_NEAR(n.mean, 2.0, 0.01);
  EXPECT_NEAR(std::sqrt(n.variance), 0.3, 0.01);
  EXPECT_NEAR(n.within1, 0.6827, 0.01);

  double rate = 0.2;
  GaussianDropout drop(rate, 4);
  EXPECT_EQ(drop(twos, false).toVector(), Tensor(twos).toVector());
  Moments d = momentsOf(drop(twos, true).toVector());
  EXPECT_NEAR(d.mean, 2.0, 0.02);
  EXPECT_NEAR(std::sqrt(d.variance), 2.0 * std::sqrt(rate / (1 - rate)), 0.02);
  EXPECT_THROW(GaussianNoise(-1), Error);
  EXPECT_THROW(GaussianDropout(1.0), Error);
}

/// AlphaDropout keeps a standard normal input standard: mean 0, variance 1,
/// with a fraction `rate` of the entries at a * alpha' + b.
TEST(NoiseLayers, AlphaDropoutKeepsMeanAndVariance) {
  double rate = 0.25;
  CallContext ctx;
  NDArray x = ops::randomNormal({200, 200}, 99, ctx.step).array();
  AlphaDropout drop(rate, 8);
  EXPECT_EQ(drop(x, false).toVector(), Tensor(x).toVector());
  std::vector<double> y = drop(x, true).toVector();
  Moments m = momentsOf(y);
  EXPECT_NEAR(m.mean, 0.0, 0.03);
  EXPECT_NEAR(m.variance, 1.0, 0.04);
  const double alphaP = -1.6732632423543772 * 1.0507009873554805;
  double a = std::pow((1 - rate) * (1 + rate * alphaP * alphaP), -0.5);
  double droppedValue = a * alphaP - a * alphaP * rate;
  double dropped = 0;
  for (double v : y)
    dropped += std::abs(v - droppedValue) < 1e-5 ? 1.0 / y.size() : 0;
  EXPECT_NEAR(dropped, rate, 0.01);
}

/// StochasticDepth drops whole examples (the rest divided by 1 - rate),
/// Dropout with a noise shape whole channels: each draw's entries together,
/// and the dropped fraction the rate.
TEST(NoiseLayers, StochasticDepthAndNoiseShapeDropWholeSlices) {
  double rate = 0.3;
  Shape shape{400, 3, 2, 5};
  NDArray ones =
      NDArray::fromVector(shape, std::vector<double>(numElements(shape), 1));
  StochasticDepth depth(rate);
  EXPECT_EQ(depth(ones, false).toVector(), Tensor(ones).toVector());
  std::vector<double> y = depth(ones, true).toVector();
  int64_t per = 3 * 2 * 5, dropped = 0;
  for (int64_t n = 0; n < 400; ++n) {
    double first = y[n * per];
    dropped += first == 0;
    if (first != 0)
      EXPECT_NEAR(first, 1 / (1 - rate), 1e-6);
    for (int64_t i = 1; i < per; ++i)
      ASSERT_EQ(y[n * per + i], first) << "example " << n;
  }
  // 400 Bernoulli(0.3): stddev of the fraction 0.023.
  EXPECT_NEAR(dropped / 400.0, rate, 0.08);

  Dropout channels(rate, 3, {-1, 1, 1, 5});
  std::vector<double> c = channels(ones, true).toVector();
  dropped = 0;
  for (int64_t n = 0; n < 400; ++n)
    for (int64_t ch = 0; ch < 5; ++ch) {
      double first = c[n * per + ch];
      dropped += first == 0;
      for (int64_t p = 1; p < 6; ++p)
        ASSERT_EQ(c[n * per + p * 5 + ch], first);
    }
  EXPECT_NEAR(dropped / 2000.0, rate, 0.05);
  EXPECT_THROW(StochasticDepth(1.0), Error);
  EXPECT_THROW(Dropout(0.5, 0, {-1, 0}), Error);
}

} // namespace
