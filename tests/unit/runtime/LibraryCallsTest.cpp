//===- LibraryCallsTest.cpp - The fused epilogues of the C entry points ---===//
//
// kc-fuse-epilogues replaces `act(product + bias)` by one
// kcc_rt_*_epilogue_* call with an activation code. Each code, in f32 and
// f64, against the product computed by the plain entry point and the bias
// and activation applied here in double precision.
//
//===----------------------------------------------------------------------===//

#include "runtime/LibraryCalls.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <vector>

namespace {

double activate(int64_t act, double v) {
  switch (act) {
  case 1:
    return v < 0 ? 0 : v;
  case 2:
    return std::tanh(v);
  case 3:
    return 1 / (1 + std::exp(-v));
  case 4:
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case 5:
    return 0.5 * v *
           (1 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
  case 6:
    return v / (1 + std::exp(-v));
  default:
    return v;
  }
}

template <typename T> std::vector<T> random(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-2, 2);
  std::vector<T> v(n);
  for (T &x : v)
    x = T(dist(gen));
  return v;
}

template <typename T>
void expectEpilogue(const std::vector<T> &plain, const std::vector<T> &bias,
                    const std::vector<T> &fused, int64_t act, bool hasBias,
                    double tol) {
  size_t n = bias.size();
  for (size_t i = 0; i < plain.size(); ++i) {
    double want = activate(act, double(plain[i]) + (hasBias ? bias[i % n] : 0));
    ASSERT_NEAR(fused[i], want, tol * (1 + std::abs(want)))
        << "element " << i << ", act " << act << ", bias " << hasBias;
  }
}

template <typename T> void checkMatmulEpilogues(double tol) {
  const int64_t m = 33, k = 17, n = 12;
  std::vector<T> a = random<T>(m * k, 1), b = random<T>(k * n, 2),
                 bias = random<T>(n, 3), plain(m * n), fused(m * n);
  if constexpr (std::is_same_v<T, float>)
    kcc_rt_matmul_f32(a.data(), b.data(), plain.data(), m, k, k, n, m, n, 0, 0);
  else
    kcc_rt_matmul_f64(a.data(), b.data(), plain.data(), m, k, k, n, m, n, 0, 0);
  for (int64_t act : {0, 1, 2, 3, 4, 5, 6})
    for (bool hasBias : {false, true}) {
      if constexpr (std::is_same_v<T, float>)
        kcc_rt_matmul_epilogue_f32(a.data(), b.data(), bias.data(),
                                   fused.data(), m, k, k, n, m, n, 0, 0,
                                   hasBias, act);
      else
        kcc_rt_matmul_epilogue_f64(a.data(), b.data(), bias.data(),
                                   fused.data(), m, k, k, n, m, n, 0, 0,
                                   hasBias, act);
      expectEpilogue(plain, bias, fused, act, hasBias, tol);
    }
}

TEST(MatmulEpilogue, EveryActivationCode) {
  checkMatmulEpilogues<float>(1e-5);
  checkMatmulEpilogues<double>(1e-12);
}

TEST(ConvEpilogue, EveryActivationCode) {
  // NHWC 2x7x7x3 input, HWIO 3x3x3x5 filter, valid padding: 2x5x5x5.
  std::vector<float> x = random<float>(2 * 7 * 7 * 3, 4),
                     w = random<float>(3 * 3 * 3 * 5, 5),
                     bias = random<float>(5, 6), plain(2 * 5 * 5 * 5),
                     fused(plain.size());
  kcc_rt_conv2d_f32(x.data(), w.data(), plain.data(), 2, 7, 7, 3, 3, 3, 3, 5,
                    2, 5, 5, 5, 1, 1, 1, 1, 0, 1);
  for (int64_t act : {0, 1, 2, 3, 4, 5, 6}) {
    kcc_rt_conv2d_epilogue_f32(x.data(), w.data(), bias.data(), fused.data(),
                               2, 7, 7, 3, 3, 3, 3, 5, 2, 5, 5, 5, 1, 1, 1, 1,
                               0, 1, 1, act);
    expectEpilogue(plain, bias, fused, act, true, 1e-5);
  }
}

} // namespace
