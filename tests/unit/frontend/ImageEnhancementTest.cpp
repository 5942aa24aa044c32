//===- ImageEnhancementTest.cpp - AutoContrast, sharpness and blur --------===//
//
// AutoContrast maps each image's channel onto the value range exactly
// (checked against the stretch computed here in double); RandomSharpness
// blends each image with its 3x3 blur by one factor per image, recovered
// from every pixel, and the factors against their distribution;
// RandomGaussianBlur against the separable blur written out here.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>

using namespace kcc;

namespace {

constexpr int64_t kImages = 1000, kH = 5, kW = 6, kC = 3;

/// Uniform [0, 1) images from a fixed LCG (independent of kcc's RNG).
NDArray images(uint64_t seed) {
  NDArray a = NDArray::empty({kImages, kH, kW, kC}, DType::F32);
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a.set(i, static_cast<double>(s >> 11) * 0x1.0p-53);
  }
  return a;
}

int64_t index(int64_t n, int64_t h, int64_t w, int64_t c) {
  return ((n * kH + h) * kW + w) * kC + c;
}

TEST(ImageEnhancement, AutoContrastStretchesEachChannelToTheRange) {
  NDArray x = images(1);
  // Image 0's first channel constant: kept as it is.
  for (int64_t p = 0; p < kH * kW; ++p)
    x.set(p * kC, 0.25);
  std::vector<double> in = Tensor(x).toVector();
  for (bool training : {false, true}) {
    std::vector<double> out = AutoContrast(-1, 3)(x, training).toVector();
    for (int64_t n = 0; n < kImages; ++n)
      for (int64_t c = 0; c < kC; ++c) {
        double lo = 1e9, hi = -1e9;
        for (int64_t h = 0; h < kH; ++h)
          for (int64_t w = 0; w < kW; ++w) {
            lo = std::min(lo, in[index(n, h, w, c)]);
            hi = std::max(hi, in[index(n, h, w, c)]);
          }
        for (int64_t h = 0; h < kH; ++h)
          for (int64_t w = 0; w < kW; ++w) {
            int64_t i = index(n, h, w, c);
            double want = hi > lo ? -1 + 4 * (in[i] - lo) / (hi - lo) : in[i];
            ASSERT_NEAR(out[i], want, 2e-5) << n << " " << c;
          }
      }
  }
}

/// The 3x3 blur [1 1 1; 1 5 1; 1 1 1] / 13 with zero padding.
double blurAt(const std::vector<double> &x, int64_t n, int64_t h, int64_t w,
              int64_t c) {
  double sum = 0;
  for (int64_t dh = -1; dh <= 1; ++dh)
    for (int64_t dw = -1; dw <= 1; ++dw) {
      int64_t y = h + dh, z = w + dw;
      if (y < 0 || y >= kH || z < 0 || z >= kW)
        continue;
      sum += (dh == 0 && dw == 0 ? 5.0 : 1.0) * x[index(n, y, z, c)];
    }
  return sum / 13;
}

TEST(ImageEnhancement, RandomSharpnessBlendsWithTheBlurByOneFactorPerImage) {
  NDArray x = images(2);
  std::vector<double> in = Tensor(x).toVector();
  EXPECT_EQ(RandomSharpness(0, 1, 0, 1)(x, false).toVector(), in);
  // 0.5 keeps the image; 0 is the blur (clipped to the range).
  EXPECT_EQ(RandomSharpness(0.5, 0.5, 0, 1)(x, true).toVector(), in);
  std::vector<double> blurred = RandomSharpness(0, 0, 0, 1)(x, true).toVector();
  for (int64_t n = 0; n < 20; ++n)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t w = 0; w < kW; ++w)
        for (int64_t c = 0; c < kC; ++c)
          ASSERT_NEAR(blurred[index(n, h, w, c)],
                      std::min(blurAt(in, n, h, w, c), 1.0), 1e-6);
  // (0.2, 0.8): out = x + (1 - 2 f) * (blur - x), one f per image.
  std::vector<double> out =
      RandomSharpness(0.2, 0.8, 0, 1, 3)(x, true).toVector();
  double sum = 0, lo = 1, hi = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    double f = NAN;
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t w = 0; w < kW; ++w)
        for (int64_t c = 0; c < kC; ++c) {
          int64_t i = index(n, h, w, c);
          double d = blurAt(in, n, h, w, c) - in[i];
          if (out[i] <= 0 || out[i] >= 1 || std::abs(d) < 0.05)
            continue;
          double g = (1 - (out[i] - in[i]) / d) / 2;
          if (std::isnan(f))
            f = g;
          ASSERT_NEAR(g, f, 1e-4) << "image " << n;
        }
    ASSERT_FALSE(std::isnan(f));
    sum += f;
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  EXPECT_NEAR(sum / kImages, 0.5, 0.02);
  EXPECT_LT(lo, 0.22);
  EXPECT_GT(hi, 0.78);
}

/// Keras's Gaussian taps in double.
std::vector<double> gaussian(int64_t size, double sigma) {
  std::vector<double> taps;
  double sum = 0;
  for (int64_t i = 0; i < size; ++i) {
    double z = (i - (size - 1) / 2.0) / sigma;
    taps.push_back(std::exp(-0.5 * z * z));
    sum += taps.back();
  }
  for (double &t : taps)
    t /= sum;
  return taps;
}

/// Every image (factor 1) blurred by 5 taps down and 3 across, sigma 0.5
/// both ways, zero padding; factor 0.3 blurs about 30% of the images, each
/// either untouched or that blur.
TEST(ImageEnhancement, RandomGaussianBlurAppliesOneKernelToAboutFactorImages) {
  NDArray x = images(4);
  std::vector<double> in = Tensor(x).toVector();
  EXPECT_EQ(RandomGaussianBlur()(x, false).toVector(), in);
  std::vector<double> across = gaussian(3, 0.5 + 1e-6),
                      down = gaussian(5, 0.5 + 1e-6);
  std::vector<double> blur(in.size());
  for (int64_t n = 0; n < kImages; ++n)
    for (int64_t h = 0; h < kH; ++h)
      for (int64_t w = 0; w < kW; ++w)
        for (int64_t c = 0; c < kC; ++c) {
          double sum = 0;
          for (int64_t dh = -2; dh <= 2; ++dh)
            for (int64_t dw = -1; dw <= 1; ++dw) {
              int64_t y = h + dh, z = w + dw;
              if (y >= 0 && y < kH && z >= 0 && z < kW)
                sum += down[dh + 2] * across[dw + 1] * in[index(n, y, z, c)];
            }
          blur[index(n, h, w, c)] = sum;
        }
  std::vector<double> all =
      RandomGaussianBlur({1, 1}, {3, 5}, {0.5, 0.5}, 0, 1, 5)(x, true)
          .toVector();
  for (size_t i = 0; i < all.size(); ++i)
    ASSERT_NEAR(all[i], blur[i], 1e-6) << i;
  std::vector<double> some =
      RandomGaussianBlur({0.3, 0.3}, {3, 5}, {0.5, 0.5}, 0, 1, 6)(x, true)
          .toVector();
  int64_t per = kH * kW * kC, blurred = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    bool same = true, isBlur = true;
    for (int64_t i = n * per; i < (n + 1) * per; ++i) {
      same = same && some[i] == in[i];
      isBlur = isBlur && std::abs(some[i] - blur[i]) < 1e-6;
    }
    ASSERT_TRUE(same || isBlur) << "image " << n;
    blurred += isBlur && !same;
  }
  EXPECT_NEAR(blurred / double(kImages), 0.3, 0.05);
}

} // namespace
