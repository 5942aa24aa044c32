//===- ExpLogErfTest.cpp - kcc's f32 exp, expm1, log, log1p, erf ----------===//
//
// Sweeps a dense sample of all f32 bit patterns (every 61st, plus the
// special values and the boundaries of each function's branches) and
// measures the error of runtime/kernels' exp, expm1, log, log1p and erf in
// ulps of the double-precision std:: result: at most 2 everywhere, with
// NaN where the reference is NaN and infinities where it is infinite. The
// sweep runs in the default floating-point mode, where subnormals are kept.
//
//===----------------------------------------------------------------------===//

#include "runtime/FlushDenormals.h"
#include "runtime/kernels/Erf.h"
#include "runtime/kernels/Exp.h"
#include "runtime/kernels/Log.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

using namespace kcc::kernels;

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float nan = std::numeric_limits<float>::quiet_NaN();

/// |got - want| in units of the last place of want rounded to f32, with
/// +-inf standing for +-2^128 (one ulp past the largest float) and the
/// subnormals' ulp 2^-149. NaN against NaN is no error, against a number
/// an infinite one.
double ulpError(float got, double want) {
  if (std::isnan(want) || std::isnan(got))
    return std::isnan(want) && std::isnan(got)
               ? 0.0
               : std::numeric_limits<double>::infinity();
  const double top = std::ldexp(1.0, 128);
  double g = std::isinf(got) ? std::copysign(top, got) : double(got);
  double w = std::fabs(want) > top ? std::copysign(top, want) : want;
  int exponent;
  std::frexp(w, &exponent);
  double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(g - w) / ulp;
}

/// Every stride-th bit pattern, the specials and `extra`.
std::vector<float> sample(const std::vector<float> &extra) {
  std::vector<float> xs = {0.0f,
                           -0.0f,
                           inf,
                           -inf,
                           nan,
                           1.0f,
                           -1.0f,
                           std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min(),
                           std::numeric_limits<float>::min(),
                           std::numeric_limits<float>::max(),
                           -std::numeric_limits<float>::max()};
  for (float e : extra)
    for (float x = e, i = 0; i < 64; ++i) {
      xs.push_back(x);
      xs.push_back(-x);
      x = std::nextafter(x, inf);
    }
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 61)
    xs.push_back(floatOf(static_cast<uint32_t>(bits)));
  return xs;
}

struct Worst {
  double ulps = 0;
  float at = 0;
};

template <typename F, typename R>
Worst worstError(const std::vector<float> &xs, F f, R reference) {
  Worst w;
  for (float x : xs) {
    double e = ulpError(f(x), reference(double(x)));
    if (e > w.ulps)
      w = {e, x};
  }
  return w;
}

#define EXPECT_WITHIN_2_ULP(worst, name)                                       \
  do {                                                                         \
    Worst w = (worst);                                                         \
    std::printf("%s: max %.3f ulp at %.9g\n", name, w.ulps, double(w.at));     \
    EXPECT_LE(w.ulps, 2.0) << name << " at " << w.at;                          \
  } while (0)

TEST(ExpLogErfTest, ExpWithin2Ulp) {
  // The overflow and underflow edges, and the subnormal results.
  auto xs = sample(
      {88.72f, 88.7228f, -87.33f, -103.9f, -104.0f, 104.0f, 0.34657f, 1e-8f});
  EXPECT_WITHIN_2_ULP(worstError(
                          xs, [](float x) { return expOf(x); },
                          [](double x) { return std::exp(x); }),
                      "exp");
}

TEST(ExpLogErfTest, Expm1Within2Ulp) {
  auto xs = sample(
      {88.72f, 88.75f, -17.33f, -25.0f, 0.34657f, 1.0397f, 2.98e-8f, 1e-4f});
  EXPECT_WITHIN_2_ULP(worstError(
                          xs, [](float x) { return expm1Of(x); },
                          [](double x) { return std::expm1(x); }),
                      "expm1");
}

TEST(ExpLogErfTest, LogWithin2Ulp) {
  auto xs = sample({0.70710677f, 1.4142135f, 1.0f, 0.99999f,
                    std::numeric_limits<float>::min()});
  EXPECT_WITHIN_2_ULP(worstError(
                          xs, [](float x) { return logOf(x); },
                          [](double x) { return std::log(x); }),
                      "log");
}

TEST(ExpLogErfTest, Log1pWithin2Ulp) {
  auto xs = sample({-0.29289323f, 0.41421354f, -0.99999994f, 5.96e-8f, 3.0f,
                    3.3554432e7f, 1e-3f});
  EXPECT_WITHIN_2_ULP(worstError(
                          xs, [](float x) { return log1pOf(x); },
                          [](double x) { return std::log1p(x); }),
                      "log1p");
}

TEST(ExpLogErfTest, ErfWithin2Ulp) {
  auto xs = sample({kErfSplit, kErfClamp, 3.9f, 1e-20f});
  EXPECT_WITHIN_2_ULP(worstError(
                          xs, [](float x) { return erfOf(x); },
                          [](double x) { return std::erf(x); }),
                      "erf");
}

TEST(ExpLogErfTest, SpecialValues) {
  EXPECT_EQ(expOf(inf), inf);
  EXPECT_EQ(expOf(-inf), 0.0f);
  EXPECT_EQ(expOf(100.0f), inf);
  EXPECT_EQ(expOf(-110.0f), 0.0f);
  EXPECT_EQ(expOf(0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(expOf(nan)));
  EXPECT_EQ(expm1Of(inf), inf);
  EXPECT_EQ(expm1Of(-inf), -1.0f);
  EXPECT_EQ(expm1Of(-30.0f), -1.0f);
  EXPECT_TRUE(std::signbit(expm1Of(-0.0f)));
  EXPECT_TRUE(std::isnan(expm1Of(nan)));
  EXPECT_EQ(logOf(0.0f), -inf);
  EXPECT_EQ(logOf(-0.0f), -inf);
  EXPECT_EQ(logOf(inf), inf);
  EXPECT_EQ(logOf(1.0f), 0.0f);
  EXPECT_TRUE(std::isnan(logOf(-1.0f)));
  EXPECT_TRUE(std::isnan(logOf(-inf)));
  EXPECT_TRUE(std::isnan(logOf(nan)));
  EXPECT_EQ(log1pOf(-1.0f), -inf);
  EXPECT_EQ(log1pOf(inf), inf);
  EXPECT_TRUE(std::signbit(log1pOf(-0.0f)));
  EXPECT_TRUE(std::isnan(log1pOf(-2.0f)));
  EXPECT_TRUE(std::isnan(log1pOf(nan)));
  EXPECT_EQ(erfOf(inf), 1.0f);
  EXPECT_EQ(erfOf(-inf), -1.0f);
  EXPECT_EQ(erfOf(10.0f), 1.0f);
  EXPECT_TRUE(std::signbit(erfOf(-0.0f)));
  EXPECT_TRUE(std::isnan(erfOf(nan)));
}

/// As in a step (runtime/FlushDenormals.h): subnormal inputs read as 0 and
/// subnormal results flush to 0; everything else is unchanged.
TEST(ExpLogErfTest, FlushedDenormals) {
  kcc::ScopedFlushDenormals flush;
  // Read at run time, so the compiler folds nothing in its own mode.
  volatile float tiny = std::numeric_limits<float>::denorm_min();
  volatile float smallest = std::numeric_limits<float>::min();
  volatile float minus100 = -100.0f, minus80 = -80.0f;
  EXPECT_EQ(expOf(minus100), 0.0f);
  EXPECT_EQ(expOf(tiny), 1.0f);
  EXPECT_EQ(logOf(tiny), -inf);
  EXPECT_EQ(bitsOf(erfOf(tiny)), 0u);
  EXPECT_EQ(logOf(smallest), float(std::log(double(smallest))));
  EXPECT_EQ(expOf(minus80), float(std::exp(-80.0)));
}

} // namespace
