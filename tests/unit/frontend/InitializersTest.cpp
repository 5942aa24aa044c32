//===- InitializersTest.cpp - Keras initializer statistics ----------------===//

#include "kcc/kcc.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;

namespace {

struct Stats {
  double mean = 0, var = 0, min = 1e300, max = -1e300;
};

Stats stats(const NDArray &a) {
  Stats s;
  std::vector<double> v = a.toVector();
  for (double x : v) {
    s.mean += x / v.size();
    s.min = std::min(s.min, x);
    s.max = std::max(s.max, x);
  }
  for (double x : v)
    s.var += (x - s.mean) * (x - s.mean) / v.size();
  return s;
}

TEST(Initializers, KerasFans) {
  init::Fans dense = init::computeFans({784, 128});
  EXPECT_EQ(dense.in, 784);
  EXPECT_EQ(dense.out, 128);
  init::Fans conv = init::computeFans({3, 3, 32, 64});
  EXPECT_EQ(conv.in, 3 * 3 * 32);
  EXPECT_EQ(conv.out, 3 * 3 * 64);
}

TEST(Initializers, GlorotUniformBoundsAndVariance) {
  NDArray w = init::initialize("glorot_uniform", {784, 128}, DType::F32, 42,
                               "dense/kernel");
  double limit = std::sqrt(6.0 / (784 + 128));
  Stats s = stats(w);
  EXPECT_GE(s.min, -limit);
  EXPECT_LE(s.max, limit);
  // The extremes of 100k uniform draws come within 0.1% of the bounds.
  EXPECT_LT(s.max, limit);
  EXPECT_GT(s.max, 0.999 * limit);
  EXPECT_LT(s.min, -0.999 * limit);
  EXPECT_NEAR(s.mean, 0.0, 0.01 * limit);
  // U(-l, l) has variance l^2/3 = 2/(fan_in+fan_out); 100k draws: ~1%.
  EXPECT_NEAR(s.var / (limit * limit / 3), 1.0, 0.02);
}

TEST(Initializers, ConvGlorotUsesReceptiveField) {
  NDArray w = init::initialize("glorot_uniform", {3, 3, 32, 64}, DType::F32,
                               1, "conv2d/kernel");
  double limit = std::sqrt(6.0 / (9 * 32 + 9 * 64));
  Stats s = stats(w);
  EXPECT_LE(s.max, limit);
  EXPECT_GT(s.max, 0.99 * limit);
  EXPECT_NEAR(s.var / (limit * limit / 3), 1.0, 0.03);
}

TEST(Initializers, NormalsHaveTheirVarianceAndAreTruncated) {
  // Keras: truncated normal at 2 stddev, stddev divided by .8796 so the
  // variance after truncation is scale / fan.
  NDArray he = init::initialize("he_normal", {400, 300}, DType::F32, 3, "a");
  Stats s = stats(he);
  double target = 2.0 / 400;
  EXPECT_NEAR(s.var / target, 1.0, 0.02);
  double cutoff = 2 * std::sqrt(target) / 0.87962566103423978;
  EXPECT_LE(s.max, cutoff + 1e-6);
  EXPECT_GE(s.min, -cutoff - 1e-6);

  NDArray gn = init::initialize("glorot_normal", {400, 300}, DType::F32, 3, "b");
  EXPECT_NEAR(stats(gn).var / (2.0 / 700), 1.0, 0.02);

  NDArray hu = init::initialize("he_uniform", {400, 300}, DType::F32, 3, "c");
  Stats u = stats(hu);
  EXPECT_LE(u.max, std::sqrt(6.0 / 400));
  EXPECT_NEAR(u.var / (2.0 / 400), 1.0, 0.02);
}

TEST(Initializers, ConstantsAndErrors) {
  Stats z = stats(init::initialize("zeros", {5}, DType::F32, 0, "b"));
  EXPECT_EQ(z.min, 0);
  EXPECT_EQ(z.max, 0);
  Stats o = stats(init::initialize("ones", {5}, DType::F64, 0, "b"));
  EXPECT_EQ(o.min, 1);
  EXPECT_EQ(o.max, 1);
  EXPECT_THROW(init::initialize("glorot_uniformish", {5}, DType::F32, 0, "x"),
               Error);
}

TEST(Initializers, SeededModelsAreReproducible) {
  auto weights = [](uint64_t seed) {
    Sequential m({Input({20}), Dense(16, "relu"), Dense(4)}, "m", seed);
    return m.getWeights();
  };
  std::vector<NDArray> a = weights(5), b = weights(5), c = weights(6);
  ASSERT_EQ(a.size(), 4u);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i].toVector(), b[i].toVector()) << "weight " << i;
  EXPECT_NE(a[0].toVector(), c[0].toVector());
  // Each weight has its own stream: the two kernels differ in content.
  EXPECT_NE(a[0].toVector()[0], a[2].toVector()[0]);
}

} // namespace
