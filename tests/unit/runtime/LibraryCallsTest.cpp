//===- LibraryCallsTest.cpp - The fused epilogues of the C entry points ---===//
//
// kc-fuse-epilogues replaces `act(product + bias)` by one
// kcc_rt_*_epilogue_* call with an activation code and its parameter. Each
// code, in f32 and f64, against the product computed by the plain entry
// point and the bias and activation applied here in double precision; and
// each code's activation against the kc kernels it is composed of
// (frontend/ops/Activations.cpp, as the interpreter runs it), bit for bit,
// on NaN, infinities and ordinary values. And the average-pooling
// gradients with relu's, tanh's or sigmoid's gradient fused, against
// kcc_rt_avg_pool2d_grad and those gradients' kc kernels, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "runtime/LibraryCalls.h"
#include "runtime/kernels/Kernels.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using kcc::DType;
using kcc::NDArray;
using Act = kcc::EpilogueActivation;

constexpr int64_t kNumCodes = int64_t(Act::Softsign) + 1;

/// The parameter each code is tested with: elu's alpha, leaky_relu's
/// slope, the bounded relu's maximum (relu6's 6 and ReLU(max_value=2.5)).
std::vector<double> paramsOf(int64_t act) {
  switch (Act(act)) {
  case Act::Elu:
    return {1.0, 0.5};
  case Act::LeakyRelu:
    return {0.2, 0.01};
  case Act::BoundedRelu:
    return {6.0, 2.5};
  default:
    return {0.0};
  }
}

double softplus(double v) {
  return std::max(v, 0.0) + std::log1p(std::exp(-std::abs(v)));
}
double hardSigmoid(double v) { return std::min(std::max(v + 3, 0.0), 6.0) / 6; }
double elu(double v, double alpha) { return v > 0 ? v : alpha * std::expm1(v); }

double activate(int64_t act, double p, double v) {
  switch (Act(act)) {
  case Act::None:
    return v;
  case Act::Relu:
    return v < 0 ? 0 : v;
  case Act::Tanh:
    return std::tanh(v);
  case Act::Sigmoid:
    return 1 / (1 + std::exp(-v));
  case Act::Gelu:
    return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
  case Act::GeluTanh:
    return 0.5 * v *
           (1 + std::tanh(0.79788456080286535588 * (v + 0.044715 * v * v * v)));
  case Act::Silu:
    return v / (1 + std::exp(-v));
  case Act::Elu:
    return elu(v, p);
  case Act::Selu:
    return 1.0507009873554804934193349852946 *
           elu(v, 1.6732632423543772848170429916717);
  case Act::LeakyRelu:
    return v >= 0 ? v : p * v;
  case Act::BoundedRelu:
    return std::min(std::max(v, 0.0), p);
  case Act::Softplus:
    return softplus(v);
  case Act::Mish:
    return v * std::tanh(softplus(v));
  case Act::HardSigmoid:
    return hardSigmoid(v);
  case Act::HardSilu:
    return v * hardSigmoid(v);
  case Act::Exp:
    return std::exp(v);
  case Act::Softsign:
    return v / (std::abs(v) + 1);
  }
  return v;
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
                    const std::vector<T> &fused, int64_t act, double p,
                    bool hasBias, double tol) {
  size_t n = bias.size();
  for (size_t i = 0; i < plain.size(); ++i) {
    double want =
        activate(act, p, double(plain[i]) + (hasBias ? bias[i % n] : 0));
    ASSERT_NEAR(fused[i], want, tol * (1 + std::abs(want)))
        << "element " << i << ", act " << act << " (" << p << "), bias "
        << hasBias;
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
  for (int64_t act = 0; act < kNumCodes; ++act)
    for (double p : paramsOf(act))
      for (bool hasBias : {false, true}) {
        if constexpr (std::is_same_v<T, float>)
          kcc_rt_matmul_epilogue_f32(a.data(), b.data(), bias.data(),
                                     fused.data(), m, k, k, n, m, n, 0, 0,
                                     hasBias, act, p);
        else
          kcc_rt_matmul_epilogue_f64(a.data(), b.data(), bias.data(),
                                     fused.data(), m, k, k, n, m, n, 0, 0,
                                     hasBias, act, p);
        expectEpilogue(plain, bias, fused, act, p, hasBias, tol);
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
  kcc_rt_conv2d_f32(x.data(), w.data(), plain.data(), 2, 7, 7, 3, 3, 3, 3, 5, 2,
                    5, 5, 5, 1, 1, 1, 1, 0, 1);
  for (int64_t act = 0; act < kNumCodes; ++act)
    for (double p : paramsOf(act)) {
      kcc_rt_conv2d_epilogue_f32(x.data(), w.data(), bias.data(), fused.data(),
                                 2, 7, 7, 3, 3, 3, 3, 5, 2, 5, 5, 5, 1, 1, 1, 1,
                                 0, 1, 1, act, p);
      expectEpilogue(plain, bias, fused, act, p, true, 1e-5);
    }
}

//===----------------------------------------------------------------------===//
// Each code against its kc kernels
//===----------------------------------------------------------------------===//

/// The kc kernels, as the interpreter runs a traced activation.
struct KcKernels {
  NDArray like(const NDArray &x, double v) {
    return NDArray::fromVector(x.shape(), std::vector<double>(x.numel(), v),
                               x.dtype());
  }
  NDArray unary(kcc::kernels::UnaryKind k, const NDArray &x) {
    NDArray out = NDArray::empty(x.shape(), x.dtype());
    kcc::kernels::unary(k, x, out);
    return out;
  }
  NDArray binary(kcc::kernels::BinaryKind k, const NDArray &a,
                 const NDArray &b) {
    NDArray out = NDArray::empty(a.shape(), a.dtype());
    kcc::kernels::binary(k, a, b, out);
    return out;
  }
  NDArray compare(kcc::kernels::CompareKind k, const NDArray &a, double v) {
    NDArray out = NDArray::empty(a.shape(), DType::I1);
    kcc::kernels::compare(k, a, like(a, v), out);
    return out;
  }
  NDArray select(const NDArray &c, const NDArray &a, const NDArray &b) {
    NDArray out = NDArray::empty(a.shape(), a.dtype());
    kcc::kernels::select(c, a, b, out);
    return out;
  }
};

/// frontend/ops/Activations.cpp's composition of `act` (and kc's own
/// kernel for the activations that have one), on x.
NDArray composed(int64_t act, double p, const NDArray &x) {
  using U = kcc::kernels::UnaryKind;
  using B = kcc::kernels::BinaryKind;
  using C = kcc::kernels::CompareKind;
  KcKernels k;
  auto add = [&](const NDArray &a, const NDArray &b) {
    return k.binary(B::Add, a, b);
  };
  auto mul = [&](const NDArray &a, const NDArray &b) {
    return k.binary(B::Mul, a, b);
  };
  auto relu6 = [&](const NDArray &v) {
    return k.binary(B::Min, k.unary(U::Relu, v), k.like(v, 6));
  };
  auto elu = [&](const NDArray &v, double alpha) {
    NDArray negative =
        k.binary(B::Sub, k.unary(U::Exp, k.binary(B::Min, v, k.like(v, 0))),
                 k.like(v, 1));
    if (alpha != 1.0)
      negative = mul(k.like(v, alpha), negative);
    return k.select(k.compare(C::GT, v, 0), v, negative);
  };
  auto softplus = [&](const NDArray &v) {
    NDArray tail = k.unary(
        U::Log, add(k.like(v, 1),
                    k.unary(U::Exp, k.unary(U::Neg, k.unary(U::Abs, v)))));
    return add(k.binary(B::Max, v, k.like(v, 0)), tail);
  };
  auto hardSigmoid = [&](const NDArray &v) {
    return k.binary(B::Div, relu6(add(v, k.like(v, 3))), k.like(v, 6));
  };
  switch (Act(act)) {
  case Act::None:
    return x.clone();
  case Act::Relu:
    return k.unary(U::Relu, x);
  case Act::Tanh:
    return k.unary(U::Tanh, x);
  case Act::Sigmoid:
    return k.unary(U::Sigmoid, x);
  case Act::Gelu:
    return k.unary(U::Gelu, x);
  case Act::GeluTanh:
    return k.unary(U::GeluTanh, x);
  case Act::Silu:
    return mul(x, k.unary(U::Sigmoid, x));
  case Act::Elu:
    return elu(x, p);
  case Act::Selu:
    return mul(k.like(x, 1.0507009873554804934193349852946),
               elu(x, 1.6732632423543772848170429916717));
  case Act::LeakyRelu:
    return k.select(k.compare(C::GE, x, 0), x, mul(k.like(x, p), x));
  case Act::BoundedRelu:
    return k.binary(B::Min, k.unary(U::Relu, x), k.like(x, p));
  case Act::Softplus:
    return softplus(x);
  case Act::Mish:
    return mul(x, k.unary(U::Tanh, softplus(x)));
  case Act::HardSigmoid:
    return hardSigmoid(x);
  case Act::HardSilu:
    return mul(x, hardSigmoid(x));
  case Act::Exp:
    return k.unary(U::Exp, x);
  case Act::Softsign:
    return k.binary(B::Div, x, add(k.unary(U::Abs, x), k.like(x, 1)));
  }
  return x.clone();
}

/// x as an [n, 1] matrix times [[1]]: the GEMM's output is x itself, to
/// which the entry point applies the activation.
template <typename T> void checkAgainstKcKernels(DType dt) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {nan,   inf,  -inf,   0.0, -1.5,  2.5, 30.0,
                                -30.0, 0.7,  -0.2,   6.0, -3.0,  3.0, 1e-7,
                                -90.0, 90.0, 5.9999, 2.5, -1e-30};
  for (double v : random<double>(2000, 7))
    values.push_back(v * 4);
  int64_t n = int64_t(values.size());
  NDArray x = NDArray::fromVector({n, 1}, values, dt);
  for (int64_t act = 0; act < kNumCodes; ++act)
    for (double p : paramsOf(act)) {
      std::vector<T> out(n);
      T one = 1;
      if constexpr (std::is_same_v<T, float>)
        kcc_rt_matmul_epilogue_f32(x.data<T>(), &one, &one, out.data(), n, 1, 1,
                                   1, n, 1, 0, 0, 0, act, p);
      else
        kcc_rt_matmul_epilogue_f64(x.data<T>(), &one, &one, out.data(), n, 1, 1,
                                   1, n, 1, 0, 0, 0, act, p);
      NDArray want = composed(act, p, x);
      for (int64_t i = 0; i < n; ++i) {
        T w = want.data<T>()[i], got = out[i];
        bool same = std::isnan(w) ? std::isnan(got)
                                  : std::memcmp(&w, &got, sizeof(T)) == 0;
        ASSERT_TRUE(same) << "act " << act << " (" << p << ") of " << values[i]
                          << ": kc kernels " << w << ", entry point " << got;
      }
    }
}

TEST(MatmulEpilogue, EveryActivationCodeEqualsItsKcKernels) {
  checkAgainstKcKernels<float>(DType::F32);
  checkAgainstKcKernels<double>(DType::F64);
}

//===----------------------------------------------------------------------===//
// Average-pooling gradients with the activation's gradient fused
//===----------------------------------------------------------------------===//

/// The unfused pair kc-fuse-epilogues replaces: kcc_rt_avg_pool2d_grad,
/// then the kc kernels of the activation's gradient from its output y
/// (ir/gradients/ElementwiseGradients.cpp), as the interpreter runs them.
NDArray unfusedPoolGrad(const char *act, const NDArray &y, const NDArray &g,
                        int64_t wh, int64_t ww, int64_t sh, int64_t sw,
                        int64_t pad) {
  using B = kcc::kernels::BinaryKind;
  using C = kcc::kernels::CompareKind;
  NDArray r = NDArray::empty(y.shape(), y.dtype());
  const auto &ys = y.shape(), &gs = g.shape();
  if (y.dtype() == DType::F32)
    kcc_rt_avg_pool2d_grad_f32(g.data<float>(), r.data<float>(), gs[0], gs[1],
                               gs[2], gs[3], ys[0], ys[1], ys[2], ys[3], wh, ww,
                               sh, sw, pad);
  else
    kcc_rt_avg_pool2d_grad_f64(g.data<double>(), r.data<double>(), gs[0], gs[1],
                               gs[2], gs[3], ys[0], ys[1], ys[2], ys[3], wh, ww,
                               sh, sw, pad);
  KcKernels k;
  std::string a = act;
  if (a == "relu")
    return k.select(k.compare(C::GT, y, 0), r, k.like(y, 0));
  if (a == "tanh")
    return k.binary(B::Mul, r,
                    k.binary(B::Sub, k.like(y, 1), k.binary(B::Mul, y, y)));
  return k.binary(B::Mul, r,
                  k.binary(B::Mul, y, k.binary(B::Sub, k.like(y, 1), y)));
}

template <typename T>
void fusedPoolGrad(const char *act, const T *y, const T *g, T *out,
                   const kcc::Shape &ys, const kcc::Shape &gs, int64_t wh,
                   int64_t ww, int64_t sh, int64_t sw, int64_t pad) {
  std::string a = act;
  auto *fn =
      std::is_same_v<T, float>
          ? (a == "relu"   ? (void *)&kcc_rt_avg_pool2d_grad_relu_f32
             : a == "tanh" ? (void *)&kcc_rt_avg_pool2d_grad_tanh_f32
                           : (void *)&kcc_rt_avg_pool2d_grad_sigmoid_f32)
          : (a == "relu"   ? (void *)&kcc_rt_avg_pool2d_grad_relu_f64
             : a == "tanh" ? (void *)&kcc_rt_avg_pool2d_grad_tanh_f64
                           : (void *)&kcc_rt_avg_pool2d_grad_sigmoid_f64);
  using Fn =
      void (*)(const T *, const T *, T *, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
               int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
  reinterpret_cast<Fn>(fn)(y, g, out, ys[0], ys[1], ys[2], ys[3], gs[0], gs[1],
                           gs[2], gs[3], ys[0], ys[1], ys[2], ys[3], wh, ww, sh,
                           sw, pad);
}

/// Each fused entry point against the unfused pair, bit for bit: tiling
/// windows (a row and column no window covers; Same padding's clipped last
/// window), overlapping ones, more channels than one task's block, and y
/// holding NaN, infinities and signed zeros; with tiling windows also in
/// place over y, as kc-reuse-buffers may place it.
template <typename T> void checkPoolGradActivations(DType dt) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  constexpr double inf = std::numeric_limits<double>::infinity();
  struct Case {
    int64_t c, wh, ww, sh, sw, pad;
  };
  for (Case c :
       {Case{3, 2, 2, 2, 2, 0}, Case{3, 2, 2, 2, 2, 1}, Case{70, 2, 2, 2, 2, 0},
        Case{3, 3, 3, 2, 2, 1}, Case{5, 3, 2, 1, 2, 0}}) {
    kcc::kernels::Padding padding =
        c.pad ? kcc::kernels::Padding::Same : kcc::kernels::Padding::Valid;
    kcc::Shape ys = {2, 7, 7, c.c};
    kcc::Shape gs = {
        2, kcc::kernels::windowOutputSize(7, c.wh, c.sh, 1, padding),
        kcc::kernels::windowOutputSize(7, c.ww, c.sw, 1, padding), c.c};
    int64_t ny = 2 * 7 * 7 * c.c, ng = gs[0] * gs[1] * gs[2] * gs[3];
    std::vector<double> yv = random<double>(ny, 11),
                        gv = random<double>(ng, 12);
    double special[] = {nan, inf, -inf, 0.0, -0.0, 1.0, -1.0, 1e30, -1e-30};
    for (size_t i = 0; i < std::size(special); ++i)
      yv[i * 13 % ny] = special[i];
    gv[1] = -0.0;
    NDArray y = NDArray::fromVector(ys, yv, dt);
    NDArray g = NDArray::fromVector(gs, gv, dt);
    bool tiled = c.wh == c.sh && c.ww == c.sw;
    if (tiled) {
      // The plain gradient: each element its window's share (a row or
      // column no window reaches: 0). Same padding's extra row and column
      // go after, so windows start at multiples of the stride.
      NDArray plain = NDArray::empty(ys, dt);
      if constexpr (std::is_same_v<T, float>)
        kcc_rt_avg_pool2d_grad_f32(g.data<T>(), plain.data<T>(), gs[0], gs[1],
                                   gs[2], gs[3], 2, 7, 7, c.c, c.wh, c.ww, c.sh,
                                   c.sw, c.pad);
      else
        kcc_rt_avg_pool2d_grad_f64(g.data<T>(), plain.data<T>(), gs[0], gs[1],
                                   gs[2], gs[3], 2, 7, 7, c.c, c.wh, c.ww, c.sh,
                                   c.sw, c.pad);
      for (int64_t i = 0; i < ny; ++i) {
        int64_t ch = i % c.c, ix = i / c.c % 7, iy = i / c.c / 7 % 7,
                b = i / c.c / 49, oy = iy / c.sh, ox = ix / c.sw;
        T want = T(0);
        if (oy < gs[1] && ox < gs[2]) {
          int64_t rows = std::min<int64_t>(7 - oy * c.sh, c.wh),
                  cols = std::min<int64_t>(7 - ox * c.sw, c.ww);
          T scale = T(1) / T(rows * cols);
          want +=
              g.data<T>()[((b * gs[1] + oy) * gs[2] + ox) * c.c + ch] * scale;
        }
        ASSERT_EQ(std::memcmp(&want, &plain.data<T>()[i], sizeof(T)), 0)
            << "plain gradient, element " << i << ": " << want << " vs "
            << plain.data<T>()[i];
      }
    }
    for (const char *act : {"relu", "tanh", "sigmoid"}) {
      NDArray want = unfusedPoolGrad(act, y, g, c.wh, c.ww, c.sh, c.sw, c.pad);
      for (bool inPlace : {false, true}) {
        if (inPlace && !tiled)
          continue;
        NDArray out = inPlace ? y.clone() : NDArray::empty(ys, dt);
        const T *yp = inPlace ? out.data<T>() : y.data<T>();
        fusedPoolGrad<T>(act, yp, g.data<T>(), out.data<T>(), ys, gs, c.wh,
                         c.ww, c.sh, c.sw, c.pad);
        for (int64_t i = 0; i < ny; ++i) {
          T w = want.data<T>()[i], got = out.data<T>()[i];
          bool same = std::isnan(w) ? std::isnan(got)
                                    : std::memcmp(&w, &got, sizeof(T)) == 0;
          ASSERT_TRUE(same)
              << act << " window " << c.wh << "x" << c.ww << " stride " << c.sh
              << "x" << c.sw << " padding " << c.pad << " channels " << c.c
              << (inPlace ? " in place" : "") << ", element " << i
              << ": unfused " << w << ", fused " << got;
        }
      }
    }
  }
}

TEST(AvgPoolGradActivation, EqualsAvgPoolGradThenItsKcKernels) {
  checkPoolGradActivations<float>(DType::F32);
  checkPoolGradActivations<double>(DType::F64);
}

} // namespace
