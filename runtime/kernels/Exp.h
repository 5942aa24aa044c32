//===- Exp.h - exp and expm1 as kcc computes them in f32 --------*- C++ -*-===//
//
// kcc's one exp and expm1 for f32, used by every kernel (the elementwise
// ops, softmax, sigmoid, the recurrent cells) and generated into compiled
// code op for op by kc-expand-math (codegen/lowering/ExpandExp.cpp), so
// interpreted and compiled steps round alike and the loops that hold them
// vectorize (libm on a vector is one call per lane).
//
// x = k ln2 + s with k = rint(x / ln2), |s| <= ln2 / 2: adding 1.5 * 2^23
// rounds x / ln2 to an integer and leaves k in the low bits, ln2 is split
// in two (Cody-Waite) so s keeps its accuracy, and exp(s) = 1 + s +
// s^2 P(s) with Cephes' minimax P. 2^k is applied as two factors 2^(k/2)
// 2^(k - k/2), so results that overflow become inf and those below 2^-126
// round once into the subnormals (or flush to 0 where FTZ is set, as in a
// step). Within 2 ulp of exp over all of f32 (ExpLogErfTest). Every
// multiply-add is an explicit fma, so the C++ and the generated code agree
// bit for bit whatever the compiler contracts; the two scalings are exact
// (powers of 2) outside the subnormals, so a caller's `exp(x) + c`
// contracted into an fma rounds as the add does. NaN propagates; f64 keeps
// std::.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_EXP_H
#define KCC_RUNTIME_KERNELS_EXP_H

#include "runtime/kernels/FloatBits.h"

#include <cmath>
#include <limits>

namespace kcc {
namespace kernels {

/// 1.5 * 2^23: x + it, rounded, is rint(x) + it for |x| < 2^22.
constexpr float kRoundToInteger = 12582912.0f;
constexpr float kLog2E = 1.44269504088896341f;
/// ln2 = kLn2Hi + kLn2Lo, kLn2Hi with 9 significant bits (k * kLn2Hi exact).
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
/// (exp(s) - 1 - s) / s^2 on [-ln2/2, ln2/2], highest power first.
constexpr float kExpPolynomial[] = {1.9875691500e-4f, 1.3981999507e-3f,
                                    8.3334519073e-3f, 4.1665795894e-2f,
                                    1.6666665459e-1f, 5.0000001201e-1f};
/// Beyond these exp is inf or 0 (the scaling handles everything between).
constexpr float kExpOverflow = 104.0f;
constexpr float kExpUnderflow = -104.0f;
/// expm1: +inf above (exp(88.75) > FLT_MAX, and 2^(k-1) still finite), -1
/// below (expm1 rounds to -1 from -17.4), x itself where |x| < 2^-25.
constexpr float kExpm1Overflow = 88.75f;
constexpr float kExpm1Saturate = -25.0f;
constexpr float kExpm1Small = 2.98023224e-8f;

/// x = k ln2 + s.
struct ExpReduction {
  float s;
  int32_t k;
};

inline ExpReduction reduceExp(float x) {
  float t = std::fma(x, kLog2E, kRoundToInteger);
  float k = t - kRoundToInteger;
  float s = std::fma(k, -kLn2Hi, x);
  s = std::fma(k, -kLn2Lo, s);
  return {s, static_cast<int32_t>(bitsOf(t) - bitsOf(kRoundToInteger))};
}

/// P(s), kExpPolynomial by Horner's rule.
inline float expPolynomial(float s) {
  float p = kExpPolynomial[0];
  for (unsigned i = 1; i < sizeof(kExpPolynomial) / sizeof(float); ++i)
    p = std::fma(p, s, kExpPolynomial[i]);
  return p;
}

inline float expOf(float x) {
  ExpReduction r = reduceExp(x);
  float y = std::fma(expPolynomial(r.s), r.s * r.s, r.s) + 1.0f;
  int32_t half = r.k >> 1;
  y = y * pow2Of(half) * pow2Of(r.k - half);
  return x > kExpOverflow ? std::numeric_limits<float>::infinity()
                          : (x < kExpUnderflow ? 0.0f : y);
}

/// expm1(x) = 2 (2^(k-1) s + 2^(k-1) s^2 P(s) + 2^(k-1) - 1/2): s and 2^(k-1)
/// - 1/2 are exact, so the small results keep their relative accuracy and
/// 2^(k-1) stays finite up to the overflow.
inline float expm1Of(float x) {
  ExpReduction r = reduceExp(x);
  float half = pow2Of(r.k - 1);
  float head = std::fma(r.s, half, half - 0.5f);
  float tail = expPolynomial(r.s) * (r.s * r.s);
  float y = 2.0f * std::fma(tail, half, head);
  return std::fabs(x) < kExpm1Small
             ? x
             : (x > kExpm1Overflow ? std::numeric_limits<float>::infinity()
                                   : (x < kExpm1Saturate ? -1.0f : y));
}

inline double expOf(double x) { return std::exp(x); }
inline double expm1Of(double x) { return std::expm1(x); }

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_EXP_H
