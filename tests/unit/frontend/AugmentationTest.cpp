//===- AugmentationTest.cpp - Keras's random image layers, eager ----------===//
//
// RandomFlip, RandomBrightness and RandomContrast are the identity at
// inference; in training each image gets one draw, so their outputs are
// checked image by image (flipped or not; shifted by one delta; scaled
// about its channel means by one factor) and the draws against their
// distribution. Keras's own stream differs, so the distributions are what
// can agree with Keras (tests/e2e/LayerParityTest.cpp checks them against
// Keras at factor 0, and a RandomFlip's draws in both execution modes).
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <tuple>

using namespace kcc;
using kcc::testing::errorOf;

namespace {

constexpr int64_t kImages = 2000, kH = 3, kW = 4, kC = 2;

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

double at(const std::vector<double> &v, int64_t n, int64_t h, int64_t w,
          int64_t c) {
  return v[((n * kH + h) * kW + w) * kC + c];
}

TEST(Augmentation, IdentityAtInference) {
  NDArray x = images(1);
  for (Layer layer : {Layer(RandomFlip()), Layer(RandomBrightness(-0.5, 0.5)),
                      Layer(RandomContrast(0.0, 0.9))})
    EXPECT_EQ(layer(x, /*training=*/false).toVector(), Tensor(x).toVector());
}

/// Each image is itself or its mirror (the same draw for both axes), and
/// about half are mirrored: 2,000 Bernoulli(0.5), stddev 0.011.
TEST(Augmentation, RandomFlipMirrorsAboutHalfTheImages) {
  NDArray x = images(2);
  std::vector<double> in = Tensor(x).toVector();
  for (std::string mode :
       {"horizontal", "vertical", "horizontal_and_vertical"}) {
    std::vector<double> out = RandomFlip(mode, 3)(x, true).toVector();
    bool flipW = mode != "vertical", flipH = mode != "horizontal";
    int64_t flipped = 0;
    for (int64_t n = 0; n < kImages; ++n) {
      bool same = true, mirrored = true;
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t w = 0; w < kW; ++w)
          for (int64_t c = 0; c < kC; ++c) {
            double o = at(out, n, h, w, c);
            same &= o == at(in, n, h, w, c);
            mirrored &= o == at(in, n, flipH ? kH - 1 - h : h,
                                flipW ? kW - 1 - w : w, c);
          }
      ASSERT_TRUE(same || mirrored) << mode << " image " << n;
      flipped += mirrored && !same;
    }
    EXPECT_NEAR(flipped / double(kImages), 0.5, 0.05) << mode;
  }
  EXPECT_THROW(RandomFlip("diagonal"), Error);
}

/// One delta per image, uniform in [lower, upper] * (high - low): its mean
/// within 4 stddev (0.35 / sqrt(12 * 2000) = 0.0023), its range filled; the
/// result clipped to [low, high].
TEST(Augmentation, RandomBrightnessShiftsEachImageByOneDelta) {
  NDArray x = images(4);
  std::vector<double> in = Tensor(x).toVector();
  // A wide value range first: nothing clips, every delta is visible.
  std::vector<double> out =
      RandomBrightness(-0.1, 0.25, -10, 10, 5)(x, true).toVector();
  double sum = 0, lo = 1e9, hi = -1e9;
  for (int64_t n = 0; n < kImages; ++n) {
    double delta = at(out, n, 0, 0, 0) - at(in, n, 0, 0, 0);
    for (int64_t i = 0; i < kH * kW * kC; ++i)
      ASSERT_NEAR(out[n * kH * kW * kC + i] - in[n * kH * kW * kC + i], delta,
                  1e-5);
    sum += delta, lo = std::min(lo, delta), hi = std::max(hi, delta);
  }
  EXPECT_NEAR(sum / kImages, 0.075 * 20,
              4 * 0.35 * 20 / std::sqrt(12.0 * kImages));
  EXPECT_GE(lo, -0.1 * 20 - 1e-5);
  EXPECT_LE(hi, 0.25 * 20 + 1e-5);
  EXPECT_LT(lo, -0.09 * 20);
  EXPECT_GT(hi, 0.24 * 20);
  // Keras's default range clips into [0, 1] here.
  for (double v : RandomBrightness(-1, 1, 0, 1, 5)(x, true).toVector())
    ASSERT_TRUE(v >= 0 && v <= 1) << v;
}

/// Each image's deviations from its channel means scaled by one factor in
/// [1 - lower, 1 + upper].
TEST(Augmentation, RandomContrastScalesEachImageByOneFactor) {
  NDArray x = images(6);
  std::vector<double> in = Tensor(x).toVector();
  std::vector<double> out =
      RandomContrast(0.2, 0.5, -100, 100, 7)(x, true).toVector();
  double sum = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    // Deviations from the channel means, in and out; the factor by least
    // squares, then every pixel against it.
    std::vector<double> d, o;
    for (int64_t c = 0; c < kC; ++c) {
      double mean = 0;
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t w = 0; w < kW; ++w)
          mean += at(in, n, h, w, c) / (kH * kW);
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t w = 0; w < kW; ++w) {
          d.push_back(at(in, n, h, w, c) - mean);
          o.push_back(at(out, n, h, w, c) - mean);
        }
    }
    double dd = 0, od = 0;
    for (size_t i = 0; i < d.size(); ++i)
      dd += d[i] * d[i], od += o[i] * d[i];
    double factor = od / dd;
    for (size_t i = 0; i < d.size(); ++i)
      ASSERT_NEAR(o[i], factor * d[i], 1e-5) << "image " << n;
    ASSERT_GE(factor, 0.8 - 1e-4);
    ASSERT_LE(factor, 1.5 + 1e-4);
    sum += factor;
  }
  EXPECT_NEAR(sum / kImages, 1.15, 4 * 0.7 / std::sqrt(12.0 * kImages));
  EXPECT_THROW(RandomContrast(0.5, 0.2), Error);
  EXPECT_THROW(RandomBrightness(0, 0.1, 1, 1), Error);
}

/// Each RGB image is itself or, with probability `factor`, its luma in
/// every channel (2,000 Bernoulli(0.3): stddev 0.010).
TEST(Augmentation, RandomGrayscaleReplacesAboutFactorOfTheImages) {
  NDArray rgb = NDArray::empty({kImages, kH, kW, 3}, DType::F32);
  NDArray two = images(8);
  for (int64_t i = 0; i < rgb.numel(); ++i)
    rgb.set(i, two.at(i % two.numel()));
  std::vector<double> in = Tensor(rgb).toVector();
  std::vector<double> out = RandomGrayscale(0.3, 9)(rgb, true).toVector();
  int64_t gray = 0, pixels = kH * kW;
  for (int64_t n = 0; n < kImages; ++n) {
    bool isGray = false;
    for (int64_t p = 0; p < pixels; ++p) {
      const double *i = &in[(n * pixels + p) * 3],
                   *o = &out[(n * pixels + p) * 3];
      double luma = 0.2989 * i[0] + 0.5870 * i[1] + 0.1140 * i[2];
      bool same = o[0] == i[0] && o[1] == i[1] && o[2] == i[2];
      bool lumaAll =
          std::abs(o[0] - luma) < 1e-6 && o[1] == o[0] && o[2] == o[0];
      if (p == 0)
        isGray = lumaAll && !same;
      ASSERT_TRUE(isGray ? lumaAll : same) << "image " << n << " pixel " << p;
    }
    gray += isGray;
  }
  EXPECT_NEAR(gray / double(kImages), 0.3, 0.05);
  // One channel passes through; two are no image Keras converts.
  NDArray x = images(10);
  EXPECT_NE(errorOf([&] {
              RandomGrayscale(0.5)(x, true);
            }).find("expects 1 or 3 channels (RGB)"),
            std::string::npos);
}

/// Each RGB image moves toward its luma by one factor f per image,
/// uniform in [lower, upper] (negative: away from gray), then is clipped:
/// f recovered from every pixel of an image is one number, and over 2,000
/// images (-0.4, 0.8) gives mean 0.2 (stddev 0.35 / sqrt(2000) = 0.008)
/// and both ends of the range.
TEST(Augmentation, RandomColorDegenerationBlendsEachImageByOneFactor) {
  NDArray rgb = NDArray::empty({kImages, kH, kW, 3}, DType::F32);
  NDArray two = images(11);
  for (int64_t i = 0; i < rgb.numel(); ++i)
    rgb.set(i, two.at(i % two.numel()));
  std::vector<double> in = Tensor(rgb).toVector();
  EXPECT_EQ(RandomColorDegeneration(-0.4, 0.8, 0, 1)(rgb, false).toVector(),
            in);
  std::vector<double> out =
      RandomColorDegeneration(-0.4, 0.8, 0, 1, 12)(rgb, true).toVector();
  int64_t pixels = kH * kW;
  double sum = 0, lo = 1, hi = -1;
  for (int64_t n = 0; n < kImages; ++n) {
    double f = NAN;
    for (int64_t p = 0; p < pixels; ++p)
      for (int c = 0; c < 3; ++c) {
        const double *i = &in[(n * pixels + p) * 3];
        double o = out[(n * pixels + p) * 3 + c];
        double luma = 0.2989 * i[0] + 0.5870 * i[1] + 0.1140 * i[2];
        ASSERT_GE(o, 0.0);
        ASSERT_LE(o, 1.0);
        // Where clipping did not bind and the pixel is not already gray,
        // the factor is (o - x) / (luma - x).
        if (o <= 0 || o >= 1 || std::abs(luma - i[c]) < 0.05)
          continue;
        double g = (o - i[c]) / (luma - i[c]);
        if (std::isnan(f))
          f = g;
        ASSERT_NEAR(g, f, 1e-4) << "image " << n;
      }
    ASSERT_FALSE(std::isnan(f));
    sum += f;
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  EXPECT_NEAR(sum / kImages, 0.2, 0.035);
  EXPECT_LT(lo, -0.35);
  EXPECT_GT(hi, 0.75);
  // Halfway at (0.5, 0.5), exactly as Keras's draw of a one-point range.
  std::vector<double> half =
      RandomColorDegeneration(0.5, 0.5, 0, 1)(rgb, true).toVector();
  for (int64_t k = 0; k < static_cast<int64_t>(in.size()); k += 3) {
    double luma = 0.2989 * in[k] + 0.5870 * in[k + 1] + 0.1140 * in[k + 2];
    for (int c = 0; c < 3; ++c)
      ASSERT_NEAR(half[k + c], in[k + c] + 0.5 * (luma - in[k + c]), 1e-6);
  }
}

/// Keras's RandomInvert draws a probability from the factor and a
/// threshold per image: factor (-1, 1) inverts a quarter of them, (0.2,
/// 0.6) 0.4; an inverted image is high - x.
TEST(Augmentation, RandomInvertInvertsAsKerasDraws) {
  NDArray x = images(11);
  std::vector<double> in = Tensor(x).toVector();
  for (auto [lower, upper, rate] :
       {std::tuple{-1.0, 1.0, 0.25}, std::tuple{0.2, 0.6, 0.4}}) {
    std::vector<double> out =
        RandomInvert(lower, upper, 0, 1, 12)(x, true).toVector();
    int64_t inverted = 0, per = kH * kW * kC;
    for (int64_t n = 0; n < kImages; ++n) {
      bool inv = out[n * per] != in[n * per];
      for (int64_t i = n * per; i < (n + 1) * per; ++i)
        ASSERT_NEAR(out[i], inv ? 1 - in[i] : in[i], 1e-6) << "image " << n;
      inverted += inv;
    }
    EXPECT_NEAR(inverted / double(kImages), rate, 0.05)
        << lower << " " << upper;
  }
  EXPECT_EQ(RandomInvert(-1, 1)(x, false).toVector(), in);
}

/// Solarization's default thresholds (0) invert every image; drawn ones
/// split each image's pixels at one threshold: those below it unchanged,
/// the others inverted (255 - v on the [0, 255] scale).
TEST(Augmentation, SolarizationInvertsAtOrAboveOneThresholdPerImage) {
  NDArray x = images(13);
  std::vector<double> in = Tensor(x).toVector();
  std::vector<double> all =
      Solarization({0, 0}, {0, 0}, 0, 1, 14)(x, true).toVector();
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_NEAR(all[i], 1 - in[i], 1e-6) << i;
  EXPECT_EQ(Solarization()(x, false).toVector(), in);
  // Thresholds uniform in [1, 255): on average half the pixels invert.
  std::vector<double> out =
      Solarization({0, 0}, {1, 1}, 0, 1, 15)(x, true).toVector();
  int64_t per = kH * kW * kC, inverted = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    double maxKept = -1, minInverted = 2;
    for (int64_t i = n * per; i < (n + 1) * per; ++i) {
      bool inv = std::abs(out[i] - in[i]) > 1e-6;
      if (inv) {
        ASSERT_NEAR(out[i], 1 - in[i], 1e-6) << "image " << n;
        minInverted = std::min(minInverted, in[i]);
        ++inverted;
      } else {
        maxKept = std::max(maxKept, in[i]);
      }
    }
    ASSERT_LT(maxKept, minInverted + 1e-6) << "image " << n;
  }
  EXPECT_NEAR(inverted / double(kImages * per), 0.5, 0.05);
}

/// RGB images on the [0, 255] scale.
NDArray rgbImages(uint64_t seed) {
  NDArray two = images(seed);
  NDArray rgb = NDArray::empty({kImages, kH, kW, 3}, DType::F32);
  for (int64_t i = 0; i < rgb.numel(); ++i)
    rgb.set(i, 255 * two.at((i * 7) % two.numel()));
  return rgb;
}

/// The textbook RGB -> HSV in double (hue in [0, 1)), independent of
/// kcc's.
std::array<double, 3> hsvOf(const double *p) {
  double r = p[0], g = p[1], b = p[2];
  double v = std::max({r, g, b}), d = v - std::min({r, g, b});
  double s = v > 0 ? d / v : 0, h = 0;
  if (d > 0) {
    if (v == r)
      h = (g - b) / d;
    else if (v == g)
      h = (b - r) / d + 2;
    else
      h = (r - g) / d + 4;
    h = std::fmod(h / 6 + 1, 1.0);
  }
  return {h, s, v};
}

/// The signed distance from hue a to hue b on the circle, in [-0.5, 0.5).
double hueShift(double a, double b) {
  return std::fmod(b - a + 1.5, 1.0) - 0.5;
}

/// Keras's RandomSaturation multiplies each image's saturation by f / (1 -
/// f): recovered from every pixel, one f per image, hue and value kept;
/// over 2,000 images (0.1, 0.5) gives mean 0.3 and both ends; (0.5, 0.5)
/// keeps the image and 0 grays it.
TEST(Augmentation, RandomSaturationScalesEachImagesSaturationByOneFactor) {
  NDArray rgb = rgbImages(16);
  std::vector<double> in = Tensor(rgb).toVector();
  EXPECT_EQ(RandomSaturation(0.1, 0.5)(rgb, false).toVector(), in);
  std::vector<double> out =
      RandomSaturation(0.1, 0.5, 0, 255, 17)(rgb, true).toVector();
  int64_t pixels = kH * kW;
  double sum = 0, lo = 1, hi = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    double scale = NAN;
    for (int64_t p = n * pixels; p < (n + 1) * pixels; ++p) {
      auto [h0, s0, v0] = hsvOf(&in[p * 3]);
      auto [h1, s1, v1] = hsvOf(&out[p * 3]);
      ASSERT_NEAR(v1, v0, 1e-3) << "image " << n;
      if (s0 < 0.05)
        continue;
      if (std::isnan(scale))
        scale = s1 / s0;
      ASSERT_NEAR(s1 / s0, scale, 1e-4) << "image " << n;
      if (s1 > 0.05)
        ASSERT_NEAR(hueShift(h0, h1), 0.0, 1e-4) << "image " << n;
    }
    ASSERT_FALSE(std::isnan(scale));
    double f = scale / (1 + scale);
    sum += f;
    lo = std::min(lo, f);
    hi = std::max(hi, f);
  }
  EXPECT_NEAR(sum / kImages, 0.3, 0.02);
  EXPECT_LT(lo, 0.12);
  EXPECT_GT(hi, 0.48);
  std::vector<double> kept = RandomSaturation(0.5, 0.5)(rgb, true).toVector();
  std::vector<double> gray = RandomSaturation(0, 0)(rgb, true).toVector();
  for (size_t k = 0; k < in.size(); k += 3) {
    double v = std::max({in[k], in[k + 1], in[k + 2]});
    for (int c = 0; c < 3; ++c) {
      ASSERT_NEAR(kept[k + c], in[k + c], 1e-3) << k;
      ASSERT_NEAR(gray[k + c], v, 1e-3) << k;
    }
  }
}

/// Keras's RandomHue moves each image's hue by +-uniform(lower, upper) / 2:
/// one shift per image from every coloured pixel, saturation and value
/// kept; (0.2, 0.6) gives |shift| in [0.1, 0.3], mean 0.2, either sign
/// about as often.
TEST(Augmentation, RandomHueRotatesEachImagesHueByOneShift) {
  NDArray rgb = rgbImages(18);
  std::vector<double> in = Tensor(rgb).toVector();
  EXPECT_EQ(RandomHue(0.2, 0.6)(rgb, false).toVector(), in);
  std::vector<double> out =
      RandomHue(0.2, 0.6, 0, 255, 19)(rgb, true).toVector();
  int64_t pixels = kH * kW, positive = 0;
  double sum = 0, lo = 1, hi = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    double shift = NAN;
    for (int64_t p = n * pixels; p < (n + 1) * pixels; ++p) {
      auto [h0, s0, v0] = hsvOf(&in[p * 3]);
      auto [h1, s1, v1] = hsvOf(&out[p * 3]);
      ASSERT_NEAR(v1, v0, 1e-3) << "image " << n;
      ASSERT_NEAR(s1, s0, 1e-4) << "image " << n;
      if (s0 < 0.05 || v0 < 10)
        continue;
      if (std::isnan(shift))
        shift = hueShift(h0, h1);
      ASSERT_NEAR(hueShift(h0, h1), shift, 1e-4) << "image " << n;
    }
    ASSERT_FALSE(std::isnan(shift));
    positive += shift > 0;
    sum += std::abs(shift);
    lo = std::min(lo, std::abs(shift));
    hi = std::max(hi, std::abs(shift));
  }
  EXPECT_NEAR(sum / kImages, 0.2, 0.01);
  EXPECT_GT(lo, 0.1 - 1e-4);
  EXPECT_LT(lo, 0.11);
  EXPECT_LT(hi, 0.3 + 1e-4);
  EXPECT_GT(hi, 0.29);
  EXPECT_NEAR(positive / double(kImages), 0.5, 0.05);
}

/// RandomColorJitter is its parts in Keras's order: with draws that cannot
/// differ (one-point ranges, contrast and hue 0) it is the four layers
/// applied one after another.
TEST(Augmentation, RandomColorJitterComposesItsPartsInKerasOrder) {
  NDArray rgb = rgbImages(21);
  ColorJitterFactors f;
  f.brightness = {0.1, 0.1};
  f.contrast = {0, 0};
  f.saturation = {0.25, 0.25};
  f.hue = {0, 0};
  RandomColorJitter jitter(f, 0, 255, 22);
  std::vector<double> in = Tensor(rgb).toVector();
  EXPECT_EQ(jitter(rgb, false).toVector(), in);
  Tensor parts = RandomBrightness(0.1, 0.1)(rgb, true);
  parts = RandomContrast(0, 0)(parts, true);
  parts = RandomSaturation(0.25, 0.25)(parts, true);
  parts = RandomHue(0, 0)(parts, true);
  std::vector<double> want = parts.toVector();
  std::vector<double> got = jitter(rgb, true).toVector();
  ASSERT_EQ(got.size(), want.size());
  double moved = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << i;
    moved = std::max(moved, std::abs(got[i] - in[i]));
  }
  EXPECT_GT(moved, 20);
  // Brightness alone on two channels; saturation needs RGB.
  NDArray two = images(23);
  ColorJitterFactors brightness, saturation;
  brightness.brightness = {-0.2, 0.2};
  saturation.saturation = {0, 0.5};
  EXPECT_EQ(RandomColorJitter(brightness, 0, 1)(two, true).shape(),
            two.shape());
  EXPECT_NE(errorOf([&] {
              RandomColorJitter(saturation, 0, 1)(two, true);
            }).find("expects 3 channels (RGB) for saturation_factor"),
            std::string::npos);
}

/// x on [0, 1] keeping the top `bits` of its byte.
double posterized(double x, int bits) {
  double step = std::ldexp(1.0, 8 - bits);
  return std::floor(std::floor(x * 255) / step) * step / 255;
}

/// Keras's RandomPosterization: one bit count per image, drawn in [lower,
/// upper) (1 to 4 about equally often for (1, 5)), exactly (3, 3) bits for
/// (3, 3).
TEST(Augmentation, RandomPosterizationKeepsTheTopBitsOfEachImage) {
  NDArray x = images(24);
  std::vector<double> in = Tensor(x).toVector();
  EXPECT_EQ(RandomPosterization(1, 5, 0, 1)(x, false).toVector(), in);
  std::vector<double> three =
      RandomPosterization(3, 3, 0, 1)(x, true).toVector();
  for (size_t i = 0; i < in.size(); ++i)
    ASSERT_NEAR(three[i], posterized(in[i], 3), 1e-6) << i;
  std::vector<double> out =
      RandomPosterization(1, 5, 0, 1, 25)(x, true).toVector();
  int64_t per = kH * kW * kC;
  std::vector<int64_t> count(5, 0);
  for (int64_t n = 0; n < kImages; ++n) {
    int found = 0;
    for (int bits = 1; bits <= 4 && !found; ++bits) {
      bool all = true;
      for (int64_t i = n * per; i < (n + 1) * per && all; ++i)
        all = std::abs(out[i] - posterized(in[i], bits)) < 1e-6;
      if (all)
        found = bits;
    }
    ASSERT_NE(found, 0) << "image " << n;
    ++count[found];
  }
  for (int bits = 1; bits <= 4; ++bits)
    EXPECT_NEAR(count[bits] / double(kImages), 0.25, 0.05) << bits;
}

/// Keras's RandomErasing at scale 0.25: a box half the width (2 columns of
/// 4) and half the height (1.5 rows of 3: 1 or 2) filled in every channel;
/// factor 0.3 erases about 30% of the images; a null fill is noise within
/// the range.
TEST(Augmentation, RandomErasingFillsOneBoxInAboutFactorOfTheImages) {
  NDArray x = images(26);
  std::vector<double> in = Tensor(x).toVector();
  EXPECT_EQ(RandomErasing()(x, false).toVector(), in);
  std::vector<double> out =
      RandomErasing({0.3, 0.3}, {0.25, 0.25}, {0.5}, 0, 1, 27)(x, true)
          .toVector();
  int64_t erased = 0;
  for (int64_t n = 0; n < kImages; ++n) {
    int64_t rows = 0, cols = 0, filled = 0;
    for (int64_t h = 0; h < kH; ++h) {
      int64_t inRow = 0;
      for (int64_t w = 0; w < kW; ++w) {
        bool f0 = at(out, n, h, w, 0) == 0.5, f1 = at(out, n, h, w, 1) == 0.5;
        ASSERT_EQ(f0, f1) << "image " << n;
        if (!f0)
          ASSERT_EQ(at(out, n, h, w, 0), at(in, n, h, w, 0));
        inRow += f0;
      }
      rows += inRow > 0;
      cols = std::max(cols, inRow);
      filled += inRow;
    }
    if (filled == 0)
      continue;
    ++erased;
    ASSERT_EQ(cols, 2) << "image " << n;
    ASSERT_TRUE(rows == 1 || rows == 2) << "image " << n;
    ASSERT_EQ(filled, rows * cols) << "image " << n;
  }
  EXPECT_NEAR(erased / double(kImages), 0.3, 0.05);
  std::vector<double> noise =
      RandomErasing({1, 1}, {0.25, 0.25}, {}, -1, 1, 28)(x, true).toVector();
  int64_t changed = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    ASSERT_GE(noise[i], -1.0);
    ASSERT_LE(noise[i], 1.0);
    changed += noise[i] != in[i];
  }
  // Every image: 2 to 4 of its 12 pixels, in both channels.
  EXPECT_GE(changed, kImages * 2 * kC * 9 / 10);
  EXPECT_LE(changed, kImages * 4 * kC);
}

TEST(Augmentation, HsvLayersNeedRgb) {
  NDArray two = images(20);
  EXPECT_NE(errorOf([&] {
              RandomHue(0, 0.5)(two, true);
            }).find("expects 3 channels (RGB)"),
            std::string::npos);
  EXPECT_NE(errorOf([&] {
              RandomSaturation(0, 0.5)(two, true);
            }).find("expects 3 channels (RGB)"),
            std::string::npos);
}

} // namespace
