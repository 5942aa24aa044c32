//===- GeometricAugmentationTest.cpp - Keras's geometric layers, eager ----===//
//
// RandomRotation, RandomZoom, RandomTranslation and RandomCrop are the
// identity at inference; in training each image (RandomCrop: each batch)
// gets one draw. The draws are read back from a coordinate image: channel
// 0 holds each pixel's row, channel 1 its column, so bilinear sampling
// inside the image returns the coordinates a pixel was read from, and from
// them the angle, the zoom, the shift or the crop offset. Their
// distributions are checked against the factor bounds (Keras's own stream
// differs; tests/e2e/GeometricParityTest.cpp checks the images against
// Keras's for the same draws), and the draws against the step and seed.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <set>

using namespace kcc;

namespace {

constexpr int64_t kImages = 2000, kSize = 9, kCentre = 4;

/// [n, 9, 9, 2]: (row, column) at every pixel.
NDArray coordinates(int64_t n = kImages) {
  NDArray a = NDArray::empty({n, kSize, kSize, 2}, DType::F32);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t y = 0; y < kSize; ++y)
      for (int64_t x = 0; x < kSize; ++x) {
        a.set(((i * kSize + y) * kSize + x) * 2, double(y));
        a.set(((i * kSize + y) * kSize + x) * 2 + 1, double(x));
      }
  return a;
}

/// The (row, column) image n's pixel (y, x) was read from.
std::pair<double, double> source(const std::vector<double> &out, int64_t n,
                                 int64_t y, int64_t x, int64_t size = kSize) {
  int64_t i = ((n * size + y) * size + x) * 2;
  return {out[i], out[i + 1]};
}

/// Mean within 4 standard deviations of a uniform(lo, hi)'s, the range
/// inside [lo, hi] and reaching within 2% of both ends.
void expectUniform(const std::vector<double> &v, double lo, double hi,
                   const char *what) {
  double sum = 0, min = 1e9, max = -1e9;
  for (double d : v)
    sum += d, min = std::min(min, d), max = std::max(max, d);
  double n = static_cast<double>(v.size());
  EXPECT_NEAR(sum / n, (lo + hi) / 2, 4 * (hi - lo) / std::sqrt(12 * n))
      << what;
  EXPECT_GE(min, lo - 1e-4) << what;
  EXPECT_LE(max, hi + 1e-4) << what;
  EXPECT_LT(min, lo + 0.02 * (hi - lo)) << what;
  EXPECT_GT(max, hi - 0.02 * (hi - lo)) << what;
}

std::vector<double> run(const Layer &layer, const NDArray &x, int64_t step) {
  CallContext ctx;
  ctx.training = true;
  ctx.step = ops::full({}, double(step), DType::I64);
  return layer.call({Tensor(x)}, ctx)[0].toVector();
}

TEST(GeometricAugmentation, IdentityAtInference) {
  NDArray x = coordinates(3);
  for (Layer layer :
       {Layer(RandomRotation(-0.5, 0.5)), Layer(RandomZoom(-0.5, 0.5)),
        Layer(RandomTranslation(-0.5, 0.5, -0.5, 0.5)),
        Layer(RandomCrop(4, 5))}) {
    Tensor y = layer(x, /*training=*/false);
    EXPECT_EQ(y.shape(), x.shape());
    EXPECT_EQ(y.toVector(), Tensor(x).toVector());
  }
}

/// The pixel right of the centre is read from the centre plus
/// (sin, cos) of the angle: angles uniform in [-0.1, 0.25] turns.
TEST(GeometricAugmentation, RandomRotationDrawsAnglesWithinTheFactor) {
  std::vector<double> out =
      run(RandomRotation(-0.1, 0.25, {}, 3), coordinates(), 0);
  std::vector<double> turns;
  for (int64_t n = 0; n < kImages; ++n) {
    auto [row, col] = source(out, n, kCentre, kCentre + 1);
    ASSERT_NEAR(std::hypot(row - kCentre, col - kCentre), 1.0, 1e-4);
    turns.push_back(std::atan2(row - kCentre, col - kCentre) / (2 * M_PI));
  }
  expectUniform(turns, -0.1, 0.25, "turns");
}

/// The pixel below and right of the centre is read from the centre plus
/// the zooms: each uniform in 1 + factor; one draw for both without a
/// width factor, independent draws with one.
TEST(GeometricAugmentation, RandomZoomDrawsZoomsWithinTheFactors) {
  std::vector<double> out = run(RandomZoom(-0.3, 0.2, std::pair{0.1, 0.4},
                                           {"nearest", "bilinear", 0.0}, 5),
                                coordinates(), 0);
  std::vector<double> zy, zx;
  double sxy = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    auto [row, col] = source(out, n, kCentre + 1, kCentre + 1);
    zy.push_back(row - kCentre), zx.push_back(col - kCentre);
    sxy += (zy.back() - 0.95) * (zx.back() - 1.25);
  }
  expectUniform(zy, 0.7, 1.2, "height zoom");
  expectUniform(zx, 1.1, 1.4, "width zoom");
  // Independent: the correlation within 4 / sqrt(n).
  EXPECT_LT(std::abs(sxy / kImages) / (0.5 / std::sqrt(12.0)) /
                (0.3 / std::sqrt(12.0)),
            4 / std::sqrt(double(kImages)));
  std::vector<double> same = run(RandomZoom(-0.3, 0.2), coordinates(), 0);
  for (int64_t n = 0; n < kImages; ++n) {
    auto [row, col] = source(same, n, kCentre + 1, kCentre + 1);
    ASSERT_NEAR(row, col, 1e-5) << "image " << n;
  }
}

/// The centre is read from itself less the shift: rows uniform in
/// [-0.2, 0.1] * 9, columns in [0, 0.3] * 9.
TEST(GeometricAugmentation, RandomTranslationDrawsShiftsWithinTheFactors) {
  std::vector<double> out = run(
      RandomTranslation(-0.2, 0.1, 0.0, 0.3, {"nearest", "bilinear", 0.0}, 7),
      coordinates(), 0);
  std::vector<double> dy, dx;
  for (int64_t n = 0; n < kImages; ++n) {
    auto [row, col] = source(out, n, kCentre, kCentre);
    dy.push_back(kCentre - row), dx.push_back(kCentre - col);
  }
  expectUniform(dy, -0.2 * kSize, 0.1 * kSize, "rows");
  expectUniform(dx, 0.0, 0.3 * kSize, "columns");
}

/// Pixel (5, 5) is read from (5 + 5 sy, 5 + 5 sx), about the top-left
/// corner as Keras's matrix has it: |sx| uniform in [0.1, 0.4], |sy| in
/// [0, 0.3], one sign for both, either sign about as often.
TEST(GeometricAugmentation, RandomShearDrawsShearsWithinTheFactors) {
  Layer shear =
      RandomShear({0.1, 0.4}, {0.0, 0.3}, {"nearest", "bilinear", 0.0}, 9);
  std::vector<double> out = run(shear, coordinates(), 0);
  std::vector<double> sx, sy;
  int64_t negative = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    auto [row, col] = source(out, n, 5, 5);
    double x = (col - 5) / 5, y = (row - 5) / 5;
    ASSERT_GE(x * y, -1e-6) << "image " << n;
    negative += x < 0;
    sx.push_back(std::abs(x)), sy.push_back(std::abs(y));
  }
  expectUniform(sx, 0.1, 0.4, "x shear");
  expectUniform(sy, 0.0, 0.3, "y shear");
  EXPECT_NEAR(negative / double(kImages), 0.5, 0.05);
  EXPECT_EQ(shear(coordinates(3), false).toVector(),
            Tensor(coordinates(3)).toVector());
}

/// One offset per batch, uniform over the 6 x 5 windows of a 4 x 5 crop
/// of 9 x 9 images; every window drawn over 600 steps.
TEST(GeometricAugmentation, RandomCropDrawsOneWindowPerBatch) {
  RandomCrop crop(4, 5, 9);
  NDArray x = coordinates(3);
  std::set<std::pair<int, int>> seen;
  std::vector<double> tops, lefts;
  for (int64_t step = 0; step < 600; ++step) {
    std::vector<double> out = run(crop, x, step);
    ASSERT_EQ(out.size(), 3u * 4 * 5 * 2);
    double top = out[0], left = out[1];
    ASSERT_EQ(top, std::floor(top));
    ASSERT_EQ(left, std::floor(left));
    for (int64_t n = 0; n < 3; ++n)
      for (int64_t y = 0; y < 4; ++y)
        for (int64_t c = 0; c < 5; ++c) {
          int64_t i = ((n * 4 + y) * 5 + c) * 2;
          ASSERT_EQ(out[i], top + y);
          ASSERT_EQ(out[i + 1], left + c);
        }
    seen.insert({int(top), int(left)});
    tops.push_back(top), lefts.push_back(left);
  }
  EXPECT_EQ(seen.size(), 6u * 5u);
  for (auto [t, l] : seen)
    EXPECT_TRUE(t >= 0 && t <= 5 && l >= 0 && l <= 4) << t << ", " << l;
  // Images no larger than the crop: Keras's centred aspect crop, resized.
  Tensor up = RandomCrop(12, 9)(coordinates(2), /*training=*/true);
  EXPECT_EQ(up.shape(), (Shape{2, 12, 9, 2}));
}

/// Different steps draw differently; the same seed and step draw the
/// same; another seed draws differently.
TEST(GeometricAugmentation, DrawsFollowTheStepAndTheSeed) {
  NDArray x = coordinates(8);
  for (auto make : std::vector<std::function<Layer(uint64_t)>>{
           [](uint64_t s) { return Layer(RandomRotation(-0.5, 0.5, {}, s)); },
           [](uint64_t s) {
             return Layer(RandomZoom(-0.5, 0.5, std::nullopt, {}, s));
           },
           [](uint64_t s) {
             return Layer(RandomTranslation(-0.5, 0.5, -0.5, 0.5, {}, s));
           },
           [](uint64_t s) { return Layer(RandomCrop(4, 5, s)); }}) {
    std::vector<double> a = run(make(11), x, 1);
    EXPECT_EQ(a, run(make(11), x, 1));
    EXPECT_NE(a, run(make(11), x, 2));
    EXPECT_NE(a, run(make(12), x, 1));
  }
}

TEST(GeometricAugmentation, BadArgumentsThrow) {
  EXPECT_THROW(RandomRotation(0.5, 0.2), Error);
  EXPECT_THROW(RandomRotation(1.5, 2.0), Error);
  EXPECT_THROW(RandomRotation(-0.1, 0.1, {"mirror", "bilinear", 0.0}), Error);
  EXPECT_THROW(RandomZoom(-1.0, 0.2), Error);
  EXPECT_THROW(RandomZoom(-0.1, 0.2, std::pair{0.0, 1.5}), Error);
  EXPECT_THROW(RandomTranslation(-0.1, 0.1, -1.5, 0.0), Error);
  EXPECT_THROW(RandomTranslation(-0.1, 0.1, 0, 0.1, {"wrap", "cubic", 0.0}),
               Error);
  EXPECT_THROW(RandomCrop(0, 4), Error);
}

} // namespace
