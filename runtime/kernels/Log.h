//===- Log.h - log and log1p as kcc computes them in f32 --------*- C++ -*-===//
//
// kcc's one log and log1p for f32, used by every kernel (the elementwise
// log, log_softmax, the losses) and generated into compiled code op for op
// by kc-expand-math (codegen/lowering/ExpandLog.cpp), so interpreted and
// compiled steps round alike and the loops that hold them vectorize.
//
// fdlibm's logf, without branches: x = 2^k m with m in [sqrt(2)/2,
// sqrt(2)) read from the bits (subnormals scaled by 2^23 first), f = m - 1,
// s = f / (2 + f) and log(m) = f - f^2/2 + s (f^2/2 + R(s^2)), so the
// rounding of s only reaches the small terms; k ln2 is added in two parts.
// log1p forms u = 1 + x and adds the correction (x - (u - 1)) / u for the
// rounding of u, or takes f = x itself where u is in [sqrt(2)/2, sqrt(2)).
// Within 2 ulp over all of f32 (ExpLogErfTest). Every multiply-add is an
// explicit fma, so the C++ and the generated code agree bit for bit.
// log(0) = -inf, log(x < 0) = NaN, log1p(-1) = -inf, NaN propagates.
// With denormals flushed, as in a step (runtime/FlushDenormals.h), a
// subnormal x reads as 0, so log gives -inf. f64 keeps std::.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_LOG_H
#define KCC_RUNTIME_KERNELS_LOG_H

#include "runtime/kernels/FloatBits.h"

#include <cmath>
#include <limits>

namespace kcc {
namespace kernels {

/// ln2 = kLogLn2Hi + kLogLn2Lo, kLogLn2Hi exact times any exponent.
constexpr float kLogLn2Hi = 6.9313812256e-01f;
constexpr float kLogLn2Lo = 9.0580006145e-06f;
/// R(z) = z (kLogPoly[0] + z^2 kLogPoly[2]) + z^2 (kLogPoly[1] + z^2
/// kLogPoly[3]), |(log(1+s) - log(1-s))/s - 2 - R(s^2)| < 2^-34.
constexpr float kLogPoly[] = {0.66666662693f, 0.40000972152f, 0.28498786688f,
                              0.24279078841f};
/// Adding it to the bits of m moves [sqrt(2)/2, sqrt(2)) onto [1, 2).
constexpr uint32_t kLogMantissaShift = 0x3f800000u - 0x3f3504f3u;
constexpr uint32_t kLogSqrtHalfBits = 0x3f3504f3u;
constexpr uint32_t kMantissaMask = 0x007fffffu;
constexpr float kSmallestNormal = 1.17549435e-38f;
constexpr float kTwoTo23 = 8388608.0f;
/// log1p(x) is x itself below.
constexpr float kLog1pSmall = 5.96046448e-8f;

/// The part of x's bits that makes 2^k m, m in [sqrt(2)/2, sqrt(2)).
struct LogReduction {
  float m;
  int32_t k;
};

inline LogReduction reduceLog(float x) {
  uint32_t bits = bitsOf(x) + kLogMantissaShift;
  int32_t k = static_cast<int32_t>(bits >> 23) - 127;
  return {floatOf((bits & kMantissaMask) + kLogSqrtHalfBits), k};
}

/// log(2^k (1 + f)) + c for f in [sqrt(2)/2 - 1, sqrt(2) - 1).
inline float logOfReduced(float f, float k, float c) {
  float s = f / (2.0f + f);
  float z = s * s;
  float w = z * z;
  float wTerms = w * std::fma(w, kLogPoly[3], kLogPoly[1]);
  float r = std::fma(z, std::fma(w, kLogPoly[2], kLogPoly[0]), wTerms);
  float halfF = 0.5f * f;
  float y = std::fma(s, std::fma(halfF, f, r), std::fma(k, kLogLn2Lo, c));
  return std::fma(k, kLogLn2Hi, std::fma(-halfF, f, y) + f);
}

inline float logOf(float x) {
  bool subnormal = x < kSmallestNormal;
  LogReduction r = reduceLog(subnormal ? x * kTwoTo23 : x);
  int32_t k = subnormal ? r.k - 23 : r.k;
  float y = logOfReduced(r.m - 1.0f, static_cast<float>(k), 0.0f);
  constexpr float inf = std::numeric_limits<float>::infinity();
  return !(x >= 0.0f) ? std::numeric_limits<float>::quiet_NaN()
                      : (x == 0.0f ? -inf : (x == inf ? inf : y));
}

inline float log1pOf(float x) {
  float u = 1.0f + x;
  LogReduction r = reduceLog(u);
  // The rounding of u, relative to u; past 2^25 it is below u's ulp.
  float c = (r.k >= 2 ? 1.0f - (u - x) : x - (u - 1.0f)) / u;
  c = r.k < 25 ? c : 0.0f;
  float f = r.k == 0 ? x : r.m - 1.0f;
  c = r.k == 0 ? 0.0f : c;
  float y = logOfReduced(f, static_cast<float>(r.k), c);
  constexpr float inf = std::numeric_limits<float>::infinity();
  return !(x >= -1.0f)
             ? std::numeric_limits<float>::quiet_NaN()
             : (x == -1.0f
                    ? -inf
                    : (x == inf ? inf : (std::fabs(x) < kLog1pSmall ? x : y)));
}

inline double logOf(double x) { return std::log(x); }
inline double log1pOf(double x) { return std::log1p(x); }

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_LOG_H
