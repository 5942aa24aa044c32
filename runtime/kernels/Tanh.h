//===- Tanh.h - tanh as XLA's CPU backend computes it -----------*- C++ -*-===//
//
// kcc's one tanh for f32, used by every kernel (the elementwise op, gelu's
// tanh form, mish, the recurrent cells) and generated into compiled code
// op for op by kc-expand-math (codegen/lowering/ExpandMath.cpp), so the
// interpreter and compiled steps round alike. It is Eigen's rational
// approximation, the one XLA's CPU backend (and so Keras on JAX and TensorFlow)
// uses: within 3.3e-7 of tanh, and about 60x cheaper than glibc's tanhf, which
// spends most of its time in expm1f. Inputs are clamped to [-7.9, 7.9],
// where the approximation peaks just under 1, and from |x| >= 9 the result
// is exactly +-1, as tanh rounds in f32 and as XLA's saturates (so
// gelu(-30) is -0 and gelu(-inf) NaN, as in Keras). The polynomial steps
// are explicit fused multiply-adds, so the C++ and the generated code
// agree bit for bit whatever the compiler contracts. NaN passes through.
// f64 (the gradient checks) keeps std::tanh.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_TANH_H
#define KCC_RUNTIME_KERNELS_TANH_H

#include <cmath>

namespace kcc {
namespace kernels {

/// The approximation's clamp and its coefficients, highest power first
/// (numerator over x^1 .. x^13, denominator over x^0 .. x^6 in x^2).
constexpr float kTanhClamp = 7.90531110763549805f;
constexpr float kTanhSmall = 0.0004f;
constexpr float kTanhSaturate = 9.0f;
constexpr float kTanhNumerator[] = {
    -2.76076847742355e-16f, 2.00018790482477e-13f, -8.60467152213735e-11f,
    5.12229709037114e-08f,  1.48572235717979e-05f, 6.37261928875436e-04f,
    4.89352455891786e-03f};
constexpr float kTanhDenominator[] = {
    1.19825839466702e-06f, 1.18534705686654e-04f, 2.26843463243900e-03f,
    4.89352518554385e-03f};

inline float tanhOf(float in) {
  float x =
      in < -kTanhClamp ? -kTanhClamp : (in > kTanhClamp ? kTanhClamp : in);
  float x2 = x * x;
  float p = kTanhNumerator[0];
  for (unsigned i = 1; i < sizeof(kTanhNumerator) / sizeof(float); ++i)
    p = std::fma(p, x2, kTanhNumerator[i]);
  float q = kTanhDenominator[0];
  for (unsigned i = 1; i < sizeof(kTanhDenominator) / sizeof(float); ++i)
    q = std::fma(q, x2, kTanhDenominator[i]);
  float r = x * p / q;
  float magnitude = std::fabs(in);
  float saturated = in > 0 ? 1.0f : -1.0f;
  return magnitude < kTanhSmall ? in
                                : (magnitude >= kTanhSaturate ? saturated : r);
}

inline double tanhOf(double x) { return std::tanh(x); }

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_TANH_H
