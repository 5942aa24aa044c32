//===- Erf.h - erf as kcc computes it in f32 --------------------*- C++ -*-===//
//
// kcc's one erf for f32, used by gelu's exact form in the kernels and
// generated into compiled code op for op by kc-expand-math
// (codegen/lowering/ExpandErf.cpp), so interpreted and compiled steps round
// alike and the loops that hold it vectorize.
//
// Two minimax fits (scripts/fit-erf.py), picked by a select:
// |x| <= 0.921875: erf(x) = x + x Q(x^2), Q of degree 5;
// beyond: erf(x) = sign(x) (1 - exp(L(|x|))), L of degree 6 fitted to
// log(erfc) on [0.921875, 4], where the error of L is damped by erfc's
// size; |x| is clamped to 4, from where erf rounds to +-1. The exp is
// Exp.h's. Within 2 ulp over all of f32 (ExpLogErfTest); NaN propagates.
// f64 keeps std::erf.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_ERF_H
#define KCC_RUNTIME_KERNELS_ERF_H

#include "runtime/kernels/Exp.h"

#include <cmath>

namespace kcc {
namespace kernels {

constexpr float kErfSplit = 0.921875f;
constexpr float kErfClamp = 4.0f;
/// Q(s) ~ erf(x) / x - 1 in s = x^2, highest power first.
constexpr float kErfSmall[] = {-6.013395614e-04f, 4.998001270e-03f,
                               -2.677023225e-02f, 1.128192693e-01f,
                               -3.761250675e-01f, 1.283791512e-01f};
/// L(t) ~ log(erfc(t)), highest power first.
constexpr float kErfLarge[] = {
    1.947337441e-04f,  -3.031593747e-03f, 2.218137309e-02f, -1.038388535e-01f,
    -6.372858286e-01f, -1.127615452e+00f, -2.099209960e-04f};

inline float erfOf(float x) {
  float s = x * x;
  float q = kErfSmall[0];
  for (unsigned i = 1; i < sizeof(kErfSmall) / sizeof(float); ++i)
    q = std::fma(q, s, kErfSmall[i]);
  float small = std::fma(q, x, x);
  float a = std::fabs(x);
  float t = a < kErfClamp ? a : kErfClamp;
  float l = kErfLarge[0];
  for (unsigned i = 1; i < sizeof(kErfLarge) / sizeof(float); ++i)
    l = std::fma(l, t, kErfLarge[i]);
  float large = std::copysign(1.0f - expOf(l), x);
  return a > kErfSplit ? large : small;
}

inline double erfOf(double x) { return std::erf(x); }

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_ERF_H
