//===- LibraryCalls.cpp - C entry points compiled code calls --------------===//
//
// Each entry point views the caller's buffers as non-owning NDArrays
// (NDArray::borrow: no copy, no allocation, nothing in AllocStats) and runs
// the kernel library on them, writing straight into the output buffer.
//
//===----------------------------------------------------------------------===//

#include "runtime/LibraryCalls.h"
#include "runtime/ProductCalls.h"
#include "runtime/kernels/Kernels.h"
#include "runtime/kernels/Recurrence.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <type_traits>
#include <variant>

using namespace kcc;

namespace {

/// float, double, and uint16_t: bfloat16's bits.
template <typename T> constexpr DType dtypeFor() {
  return sizeof(T) == 4   ? DType::F32
         : sizeof(T) == 2 ? DType::BF16
                          : DType::F64;
}

/// A view of a buffer compiled code owns. Inputs are never written: the
/// const_cast only satisfies NDArray, which has no read-only flavour.
template <typename T> NDArray view(const T *data, Shape shape) {
  return NDArray::borrow(const_cast<T *>(data), shape, dtypeFor<T>());
}

/// Runs `body`, turning an exception into a message and abort(): it must not
/// unwind through JIT frames, which have no unwind tables.
template <typename Body> void guarded(const char *name, Body &&body) {
  try {
    body();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "kcc: %s failed in compiled code: %s\n", name,
                 e.what());
    std::abort();
  }
}

/// Reports an f32 or bf16 product call to a live recording
/// (runtime/ProductCalls.h): `run` replays it on other operands of
/// `elements` elements each (bf16 ones on the float scratch's bits: small
/// dyadic floats, whose halves are finite bf16 values).
template <typename T, typename Run>
void recordProduct(std::array<int64_t, 4> elements, Run run) {
  if constexpr (!std::is_same_v<T, double>)
    if (__builtin_expect(rt::recordingProductCalls(), 0)) {
      if constexpr (std::is_same_v<T, float>)
        return rt::recordProductCall({elements, std::move(run)});
      rt::recordProductCall(
          {elements, [run = std::move(run)](const float *a, const float *b,
                                            const float *bias, float *out) {
             run(reinterpret_cast<const T *>(a), reinterpret_cast<const T *>(b),
                 reinterpret_cast<const T *>(bias), reinterpret_cast<T *>(out));
           }});
    }
}

kernels::Padding padding(int64_t code) {
  return code ? kernels::Padding::Same : kernels::Padding::Valid;
}

/// f32 with nothing to zero (k > 0): straight to the GEMM, no array views.
bool matmulFast(const float *a, const float *b, const float *bias, float *out,
                int64_t a0, int64_t a1, int64_t o0, int64_t o1, int64_t ta,
                int64_t tb, bool relu) {
  int64_t k = ta ? a0 : a1;
  if (o0 <= 0 || o1 <= 0 || k <= 0)
    return false;
  guarded("matmul", [&] {
    kernels::matmulF32(a, b, bias, out, o0, o1, k, ta != 0, tb != 0, relu);
  });
  return true;
}
template <typename T>
bool matmulFast(const T *, const T *, const T *, T *, int64_t, int64_t, int64_t,
                int64_t, int64_t, int64_t, bool) {
  return false;
}

template <typename T>
void matmul(const T *a, const T *b, T *out, int64_t a0, int64_t a1, int64_t b0,
            int64_t b1, int64_t o0, int64_t o1, int64_t ta, int64_t tb) {
  recordProduct<T>({a0 * a1, b0 * b1, 0, o0 * o1},
                   [=](const T *a, const T *b, const T *, T *out) {
                     matmul(a, b, out, a0, a1, b0, b1, o0, o1, ta, tb);
                   });
  if (matmulFast(a, b, static_cast<const T *>(nullptr), out, a0, a1, o0, o1, ta,
                 tb, false))
    return;
  guarded("matmul", [&] {
    NDArray A = view(a, {a0, a1}), B = view(b, {b0, b1});
    NDArray O = view(out, {o0, o1});
    kernels::matmul(A, B, ta != 0, tb != 0, O);
  });
}

template <typename T>
void batchMatmul(const T *a, const T *b, T *out, int64_t a0, int64_t a1,
                 int64_t a2, int64_t b0, int64_t b1, int64_t b2, int64_t o0,
                 int64_t o1, int64_t o2, int64_t ta, int64_t tb) {
  recordProduct<T>({a0 * a1 * a2, b0 * b1 * b2, 0, o0 * o1 * o2},
                   [=](const T *a, const T *b, const T *, T *out) {
                     batchMatmul(a, b, out, a0, a1, a2, b0, b1, b2, o0, o1, o2,
                                 ta, tb);
                   });
  int64_t k = ta ? a1 : a2;
  if constexpr (std::is_same_v<T, float>)
    if (o0 > 0 && o1 > 0 && o2 > 0 && k > 0)
      return guarded("batch_matmul", [&] {
        kernels::batchMatmulF32(a, b, out, o0, o1, o2, k, ta != 0, tb != 0);
      });
  guarded("batch_matmul", [&] {
    NDArray A = view(a, {a0, a1, a2}), B = view(b, {b0, b1, b2});
    NDArray O = view(out, {o0, o1, o2});
    kernels::batchMatmul(A, B, ta != 0, tb != 0, O);
  });
}

using Act = EpilogueActivation;

/// The epilogue the product kernel applies itself: bias when `hasBias`,
/// relu when `act` says so.
kernels::Epilogue epilogue(const NDArray *bias, int64_t act) {
  kernels::Epilogue e;
  e.bias = bias;
  e.relu = Act(act) == Act::Relu;
  return e;
}

/// The activations the product kernels leave to the caller, applied to the
/// output in place right after the product: the same kernel as the kc op's,
/// or for an activation composed of kc ops one computed as the composition
/// is (so the result equals the unfused interpreter's), on data still in
/// cache. Indexed by EpilogueActivation; none and relu (the product
/// kernel's own) have none.
void activateInPlace(const char *op, int64_t act, double param, NDArray out) {
  using K = kernels::UnaryKind;
  using C = kernels::ComposedActivation;
  static const std::variant<std::monostate, K, C> kKernels[] = {
      {},             // None
      {},             // Relu
      K::Tanh,        // Tanh
      K::Sigmoid,     // Sigmoid
      K::Gelu,        // Gelu
      K::GeluTanh,    // GeluTanh
      K::Silu,        // Silu
      C::Elu,         // Elu
      C::Selu,        // Selu
      C::LeakyRelu,   // LeakyRelu
      C::BoundedRelu, // BoundedRelu
      C::Softplus,    // Softplus
      C::Mish,        // Mish
      C::HardSigmoid, // HardSigmoid
      C::HardSilu,    // HardSilu
      K::Exp,         // Exp
      C::Softsign,    // Softsign
  };
  static_assert(std::size(kKernels) == size_t(Act::Softsign) + 1,
                "one entry per EpilogueActivation");
  if (act < 0 || act >= int64_t(std::size(kKernels)))
    return;
  if (const K *unary = std::get_if<K>(&kKernels[act]))
    guarded(op, [&] { kernels::unary(*unary, out, out); });
  else if (const C *composed = std::get_if<C>(&kKernels[act]))
    guarded(op,
            [&] { kernels::composedActivation(*composed, param, out, out); });
}

template <typename T>
void matmulEpilogue(const T *a, const T *b, const T *bias, T *out, int64_t a0,
                    int64_t a1, int64_t b0, int64_t b1, int64_t o0, int64_t o1,
                    int64_t ta, int64_t tb, int64_t hasBias, int64_t act,
                    double actParam) {
  // The library's part: the product with its bias and relu.
  int64_t libraryAct = Act(act) == Act::Relu ? act : int64_t(Act::None);
  recordProduct<T>({a0 * a1, b0 * b1, hasBias ? o1 : 0, o0 * o1},
                   [=](const T *a, const T *b, const T *bias, T *out) {
                     matmulEpilogue(a, b, bias, out, a0, a1, b0, b1, o0, o1, ta,
                                    tb, hasBias, libraryAct, 0.0);
                   });
  if (!matmulFast(a, b, hasBias ? bias : nullptr, out, a0, a1, o0, o1, ta, tb,
                  Act(act) == Act::Relu))
    guarded("matmul", [&] {
      NDArray A = view(a, {a0, a1}), B = view(b, {b0, b1});
      NDArray O = view(out, {o0, o1}), Bias = view(bias, {o1});
      kernels::matmul(A, B, ta != 0, tb != 0, O,
                      epilogue(hasBias ? &Bias : nullptr, act));
    });
  activateInPlace("matmul", act, actParam, view(out, {o0, o1}));
}

template <typename T>
void conv2dEpilogue(const T *x, const T *y, const T *bias, T *out, int64_t x0,
                    int64_t x1, int64_t x2, int64_t x3, int64_t y0, int64_t y1,
                    int64_t y2, int64_t y3, int64_t o0, int64_t o1, int64_t o2,
                    int64_t o3, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                    int64_t pad, int64_t groups, int64_t hasBias, int64_t act,
                    double actParam) {
  int64_t libraryAct = Act(act) == Act::Relu ? act : int64_t(Act::None);
  recordProduct<T>({x0 * x1 * x2 * x3, y0 * y1 * y2 * y3, hasBias ? o3 : 0,
                    o0 * o1 * o2 * o3},
                   [=](const T *x, const T *y, const T *bias, T *out) {
                     conv2dEpilogue(x, y, bias, out, x0, x1, x2, x3, y0, y1, y2,
                                    y3, o0, o1, o2, o3, sh, sw, dh, dw, pad,
                                    groups, hasBias, libraryAct, 0.0);
                   });
  guarded("conv2d", [&] {
    NDArray X = view(x, {x0, x1, x2, x3}), Y = view(y, {y0, y1, y2, y3});
    NDArray O = view(out, {o0, o1, o2, o3}), Bias = view(bias, {o3});
    kernels::Conv2DParams p;
    p.strideH = sh, p.strideW = sw, p.dilationH = dh, p.dilationW = dw;
    p.padding = padding(pad);
    p.groups = groups;
    kernels::conv2d(X, Y, p, O, epilogue(hasBias ? &Bias : nullptr, act));
  });
  activateInPlace("conv2d", act, actParam, view(out, {o0, o1, o2, o3}));
}

enum class ConvKind { Forward, BackpropInput, BackpropFilter };

template <typename T, ConvKind K>
void conv(const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,
          int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3,
          int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t sh,
          int64_t sw, int64_t dh, int64_t dw, int64_t pad, int64_t groups) {
  recordProduct<T>({x0 * x1 * x2 * x3, y0 * y1 * y2 * y3, 0, o0 * o1 * o2 * o3},
                   [=](const T *x, const T *y, const T *, T *out) {
                     conv<T, K>(x, y, out, x0, x1, x2, x3, y0, y1, y2, y3, o0,
                                o1, o2, o3, sh, sw, dh, dw, pad, groups);
                   });
  guarded("conv2d", [&] {
    NDArray X = view(x, {x0, x1, x2, x3}), Y = view(y, {y0, y1, y2, y3});
    NDArray O = view(out, {o0, o1, o2, o3});
    kernels::Conv2DParams p;
    p.strideH = sh, p.strideW = sw, p.dilationH = dh, p.dilationW = dw;
    p.padding = padding(pad);
    p.groups = groups;
    if constexpr (K == ConvKind::Forward)
      kernels::conv2d(X, Y, p, O);
    else if constexpr (K == ConvKind::BackpropInput)
      kernels::conv2dBackpropInput(X, Y, p, O);
    else
      kernels::conv2dBackpropFilter(X, Y, p, O);
  });
}

kernels::Pool2DParams poolParams(int64_t wh, int64_t ww, int64_t sh, int64_t sw,
                                 int64_t pad) {
  kernels::Pool2DParams p;
  p.windowH = wh, p.windowW = ww, p.strideH = sh, p.strideW = sw;
  p.padding = padding(pad);
  return p;
}

enum class PoolKind { Max, MaxRelu, Avg, AvgGrad };

template <typename T, PoolKind K>
void pool1(const T *x, T *out, int64_t x0, int64_t x1, int64_t x2, int64_t x3,
           int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t wh,
           int64_t ww, int64_t sh, int64_t sw, int64_t pad) {
  guarded("pool2d", [&] {
    NDArray X = view(x, {x0, x1, x2, x3});
    NDArray O = view(out, {o0, o1, o2, o3});
    auto p = poolParams(wh, ww, sh, sw, pad);
    if constexpr (K == PoolKind::Max)
      kernels::maxPool2d(X, p, O);
    else if constexpr (K == PoolKind::MaxRelu)
      kernels::maxPool2dRelu(X, p, O);
    else if constexpr (K == PoolKind::Avg)
      kernels::avgPool2d(X, p, O);
    else
      kernels::avgPool2dGrad(X, p, O);
  });
}

template <typename T>
void maxPoolGrad(const T *x, const T *y, T *out, int64_t x0, int64_t x1,
                 int64_t x2, int64_t x3, int64_t y0, int64_t y1, int64_t y2,
                 int64_t y3, int64_t o0, int64_t o1, int64_t o2, int64_t o3,
                 int64_t wh, int64_t ww, int64_t sh, int64_t sw, int64_t pad,
                 bool reluMask = false) {
  guarded("max_pool2d_grad", [&] {
    NDArray X = view(x, {x0, x1, x2, x3}), Y = view(y, {y0, y1, y2, y3});
    NDArray O = view(out, {o0, o1, o2, o3});
    kernels::maxPool2dGrad(X, Y, poolParams(wh, ww, sh, sw, pad), O, reluMask);
  });
}

template <typename T>
void avgPoolGrad(const T *x, const T *y, T *out, int64_t x0, int64_t x1,
                 int64_t x2, int64_t x3, int64_t y0, int64_t y1, int64_t y2,
                 int64_t y3, int64_t o0, int64_t o1, int64_t o2, int64_t o3,
                 int64_t wh, int64_t ww, int64_t sh, int64_t sw, int64_t pad,
                 kernels::PoolGradActivation act) {
  guarded("avg_pool2d_grad", [&] {
    NDArray X = view(x, {x0, x1, x2, x3}), Y = view(y, {y0, y1, y2, y3});
    NDArray O = view(out, {o0, o1, o2, o3});
    kernels::avgPool2dGrad(X, Y, poolParams(wh, ww, sh, sw, pad), act, O);
  });
}

} // namespace

#define KCC_RT_AVG_POOL_GRAD_ACT(T, S, NAME, ACT)                              \
  void kcc_rt_avg_pool2d_grad_##NAME##_##S(                                    \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t wh, int64_t ww, int64_t sh,  \
      int64_t sw, int64_t pad) {                                               \
    avgPoolGrad<T>(x, y, out, x0, x1, x2, x3, y0, y1, y2, y3, o0, o1, o2, o3,  \
                   wh, ww, sh, sw, pad, kernels::PoolGradActivation::ACT);     \
  }

/// The products every float type has: GEMM, batched GEMM and the three
/// convolutions (bfloat16: bits in uint16_t, float32 accumulation).
#define KCC_RT_DEFINE_PRODUCTS(T, S)                                           \
  void kcc_rt_matmul_##S(const T *a, const T *b, T *out, int64_t a0,           \
                         int64_t a1, int64_t b0, int64_t b1, int64_t o0,       \
                         int64_t o1, int64_t ta, int64_t tb) {                 \
    matmul(a, b, out, a0, a1, b0, b1, o0, o1, ta, tb);                         \
  }                                                                            \
  void kcc_rt_batch_matmul_##S(const T *a, const T *b, T *out, int64_t a0,     \
                               int64_t a1, int64_t a2, int64_t b0, int64_t b1, \
                               int64_t b2, int64_t o0, int64_t o1, int64_t o2, \
                               int64_t ta, int64_t tb) {                       \
    batchMatmul(a, b, out, a0, a1, a2, b0, b1, b2, o0, o1, o2, ta, tb);        \
  }                                                                            \
  void kcc_rt_conv2d_##S(                                                      \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t sh, int64_t sw, int64_t dh,  \
      int64_t dw, int64_t pad, int64_t groups) {                               \
    conv<T, ConvKind::Forward>(x, y, out, x0, x1, x2, x3, y0, y1, y2, y3, o0,  \
                               o1, o2, o3, sh, sw, dh, dw, pad, groups);       \
  }                                                                            \
  void kcc_rt_conv2d_backprop_input_##S(                                       \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t sh, int64_t sw, int64_t dh,  \
      int64_t dw, int64_t pad, int64_t groups) {                               \
    conv<T, ConvKind::BackpropInput>(x, y, out, x0, x1, x2, x3, y0, y1, y2,    \
                                     y3, o0, o1, o2, o3, sh, sw, dh, dw, pad,  \
                                     groups);                                  \
  }                                                                            \
  void kcc_rt_conv2d_backprop_filter_##S(                                      \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t sh, int64_t sw, int64_t dh,  \
      int64_t dw, int64_t pad, int64_t groups) {                               \
    conv<T, ConvKind::BackpropFilter>(x, y, out, x0, x1, x2, x3, y0, y1, y2,   \
                                      y3, o0, o1, o2, o3, sh, sw, dh, dw, pad, \
                                      groups);                                 \
  }

#define KCC_RT_DEFINE(T, S)                                                    \
  KCC_RT_DEFINE_PRODUCTS(T, S)                                                 \
  void kcc_rt_matmul_epilogue_##S(                                             \
      const T *a, const T *b, const T *bias, T *out, int64_t a0, int64_t a1,   \
      int64_t b0, int64_t b1, int64_t o0, int64_t o1, int64_t ta, int64_t tb,  \
      int64_t hasBias, int64_t act, double actParam) {                         \
    matmulEpilogue(a, b, bias, out, a0, a1, b0, b1, o0, o1, ta, tb, hasBias,   \
                   act, actParam);                                             \
  }                                                                            \
  void kcc_rt_conv2d_epilogue_##S(                                             \
      const T *x, const T *y, const T *bias, T *out, int64_t x0, int64_t x1,   \
      int64_t x2, int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3,  \
      int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t sh, int64_t sw,  \
      int64_t dh, int64_t dw, int64_t pad, int64_t groups, int64_t hasBias,    \
      int64_t act, double actParam) {                                          \
    conv2dEpilogue(x, y, bias, out, x0, x1, x2, x3, y0, y1, y2, y3, o0, o1,    \
                   o2, o3, sh, sw, dh, dw, pad, groups, hasBias, act,          \
                   actParam);                                                  \
  }                                                                            \
  void kcc_rt_max_pool2d_##S(const T *x, T *out, int64_t x0, int64_t x1,       \
                             int64_t x2, int64_t x3, int64_t o0, int64_t o1,   \
                             int64_t o2, int64_t o3, int64_t wh, int64_t ww,   \
                             int64_t sh, int64_t sw, int64_t pad) {            \
    pool1<T, PoolKind::Max>(x, out, x0, x1, x2, x3, o0, o1, o2, o3, wh, ww,    \
                            sh, sw, pad);                                      \
  }                                                                            \
  void kcc_rt_max_pool2d_relu_##S(                                             \
      const T *x, T *out, int64_t x0, int64_t x1, int64_t x2, int64_t x3,      \
      int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t wh, int64_t ww,  \
      int64_t sh, int64_t sw, int64_t pad) {                                   \
    pool1<T, PoolKind::MaxRelu>(x, out, x0, x1, x2, x3, o0, o1, o2, o3, wh,    \
                                ww, sh, sw, pad);                              \
  }                                                                            \
  void kcc_rt_avg_pool2d_##S(const T *x, T *out, int64_t x0, int64_t x1,       \
                             int64_t x2, int64_t x3, int64_t o0, int64_t o1,   \
                             int64_t o2, int64_t o3, int64_t wh, int64_t ww,   \
                             int64_t sh, int64_t sw, int64_t pad) {            \
    pool1<T, PoolKind::Avg>(x, out, x0, x1, x2, x3, o0, o1, o2, o3, wh, ww,    \
                            sh, sw, pad);                                      \
  }                                                                            \
  void kcc_rt_avg_pool2d_grad_##S(                                             \
      const T *x, T *out, int64_t x0, int64_t x1, int64_t x2, int64_t x3,      \
      int64_t o0, int64_t o1, int64_t o2, int64_t o3, int64_t wh, int64_t ww,  \
      int64_t sh, int64_t sw, int64_t pad) {                                   \
    pool1<T, PoolKind::AvgGrad>(x, out, x0, x1, x2, x3, o0, o1, o2, o3, wh,    \
                                ww, sh, sw, pad);                              \
  }                                                                            \
  void kcc_rt_max_pool2d_grad_##S(                                             \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t wh, int64_t ww, int64_t sh,  \
      int64_t sw, int64_t pad) {                                               \
    maxPoolGrad<T>(x, y, out, x0, x1, x2, x3, y0, y1, y2, y3, o0, o1, o2, o3,  \
                   wh, ww, sh, sw, pad);                                       \
  }                                                                            \
  void kcc_rt_max_pool2d_grad_relu_##S(                                        \
      const T *x, const T *y, T *out, int64_t x0, int64_t x1, int64_t x2,      \
      int64_t x3, int64_t y0, int64_t y1, int64_t y2, int64_t y3, int64_t o0,  \
      int64_t o1, int64_t o2, int64_t o3, int64_t wh, int64_t ww, int64_t sh,  \
      int64_t sw, int64_t pad) {                                               \
    maxPoolGrad<T>(x, y, out, x0, x1, x2, x3, y0, y1, y2, y3, o0, o1, o2, o3,  \
                   wh, ww, sh, sw, pad, /*reluMask=*/true);                    \
  }

extern "C" {
KCC_RT_DEFINE(float, f32)
KCC_RT_DEFINE(double, f64)
KCC_RT_DEFINE_PRODUCTS(uint16_t, bf16)
KCC_RT_AVG_POOL_GRAD_ACT(float, f32, relu, Relu)
KCC_RT_AVG_POOL_GRAD_ACT(float, f32, tanh, Tanh)
KCC_RT_AVG_POOL_GRAD_ACT(float, f32, sigmoid, Sigmoid)
KCC_RT_AVG_POOL_GRAD_ACT(double, f64, relu, Relu)
KCC_RT_AVG_POOL_GRAD_ACT(double, f64, tanh, Tanh)
KCC_RT_AVG_POOL_GRAD_ACT(double, f64, sigmoid, Sigmoid)
}

namespace {

template <typename T, typename I>
void gatherCall(const T *table, const I *indices, T *out, int64_t t0,
                int64_t t1, int64_t i0, int64_t o0, int64_t o1) {
  guarded("gather", [&] {
    NDArray t = view(table, {t0, t1});
    NDArray i = NDArray::borrow(const_cast<I *>(indices), {i0},
                                sizeof(I) == 4 ? DType::I32 : DType::I64);
    NDArray o = NDArray::borrow(out, {o0, o1}, dtypeFor<T>());
    kernels::gather(t, i, o);
  });
}

template <typename T, typename I>
void gatherGradCall(const I *indices, const T *grad, T *out, int64_t i0,
                    int64_t g0, int64_t g1, int64_t o0, int64_t o1) {
  guarded("gather_grad", [&] {
    NDArray i = NDArray::borrow(const_cast<I *>(indices), {i0},
                                sizeof(I) == 4 ? DType::I32 : DType::I64);
    NDArray g = view(grad, {g0, g1});
    NDArray o = NDArray::borrow(out, {o0, o1}, dtypeFor<T>());
    kernels::gatherGrad(i, g, o);
  });
}

} // namespace

#define KCC_RT_DEFINE_GATHER(T, S, I, IS)                                      \
  void kcc_rt_gather_##IS##_##S(const T *table, const I *indices, T *out,      \
                                int64_t t0, int64_t t1, int64_t i0,            \
                                int64_t o0, int64_t o1) {                      \
    gatherCall(table, indices, out, t0, t1, i0, o0, o1);                       \
  }                                                                            \
  void kcc_rt_gather_grad_##IS##_##S(const I *indices, const T *grad, T *out,  \
                                     int64_t i0, int64_t g0, int64_t g1,       \
                                     int64_t o0, int64_t o1) {                 \
    gatherGradCall(indices, grad, out, i0, g0, g1, o0, o1);                    \
  }

extern "C" {
KCC_RT_DEFINE_GATHER(float, f32, int32_t, i32)
KCC_RT_DEFINE_GATHER(float, f32, int64_t, i64)
KCC_RT_DEFINE_GATHER(double, f64, int32_t, i32)
KCC_RT_DEFINE_GATHER(double, f64, int64_t, i64)
}

namespace {

template <typename T>
void ctcLossCall(const T *logits, const int32_t *labels, const T *grad, T *out,
                 Shape logitsShape, Shape labelsShape, Shape outShape) {
  guarded(grad ? "ctc_loss_grad" : "ctc_loss", [&] {
    NDArray x = view(logits, logitsShape);
    NDArray y =
        NDArray::borrow(const_cast<int32_t *>(labels), labelsShape, DType::I32);
    NDArray o = NDArray::borrow(out, outShape, dtypeFor<T>());
    if (grad)
      kernels::ctcLossGrad(x, y, view(grad, {logitsShape[0]}), o);
    else
      kernels::ctcLoss(x, y, o);
  });
}

} // namespace

#define KCC_RT_DEFINE_CTC(T, S)                                                \
  void kcc_rt_ctc_loss_##S(const T *logits, const int32_t *labels, T *out,     \
                           int64_t l0, int64_t l1, int64_t l2, int64_t y0,     \
                           int64_t y1, int64_t o0) {                           \
    ctcLossCall<T>(logits, labels, nullptr, out, {l0, l1, l2}, {y0, y1},       \
                   {o0});                                                      \
  }                                                                            \
  void kcc_rt_ctc_loss_grad_##S(                                               \
      const T *logits, const int32_t *labels, const T *grad, T *out,           \
      int64_t l0, int64_t l1, int64_t l2, int64_t y0, int64_t y1, int64_t g0,  \
      int64_t o0, int64_t o1, int64_t o2) {                                    \
    ctcLossCall<T>(logits, labels, grad, out, {l0, l1, l2}, {y0, y1},          \
                   {o0, o1, o2});                                              \
  }

extern "C" {
KCC_RT_DEFINE_CTC(float, f32)
KCC_RT_DEFINE_CTC(double, f64)
}

namespace {

kernels::ImageTransformParams imageTransformParams(int64_t interpolation,
                                                   int64_t fillMode,
                                                   int64_t fillBits) {
  kernels::ImageTransformParams p;
  p.interpolation = static_cast<kernels::ImageInterpolation>(interpolation);
  p.fillMode = static_cast<kernels::ImageFillMode>(fillMode);
  std::memcpy(&p.fillValue, &fillBits, sizeof(double));
  return p;
}

} // namespace

#define KCC_RT_DEFINE_IMAGE_TRANSFORM(T, S)                                    \
  void kcc_rt_image_transform_##S(                                             \
      const T *images, const T *transforms, T *out, int64_t i0, int64_t i1,    \
      int64_t i2, int64_t i3, int64_t t0, int64_t t1, int64_t o0, int64_t o1,  \
      int64_t o2, int64_t o3, int64_t interpolation, int64_t fillMode,         \
      int64_t fillBits) {                                                      \
    guarded("image_transform", [&] {                                           \
      NDArray o = NDArray::borrow(out, {o0, o1, o2, o3}, dtypeFor<T>());       \
      kernels::imageTransform(                                                 \
          view(images, {i0, i1, i2, i3}), view(transforms, {t0, t1}),          \
          imageTransformParams(interpolation, fillMode, fillBits), o);         \
    });                                                                        \
  }                                                                            \
  void kcc_rt_image_transform_grad_##S(                                        \
      const T *transforms, const T *grad, T *out, int64_t t0, int64_t t1,      \
      int64_t g0, int64_t g1, int64_t g2, int64_t g3, int64_t o0, int64_t o1,  \
      int64_t o2, int64_t o3, int64_t interpolation, int64_t fillMode,         \
      int64_t fillBits) {                                                      \
    guarded("image_transform_grad", [&] {                                      \
      NDArray o = NDArray::borrow(out, {o0, o1, o2, o3}, dtypeFor<T>());       \
      kernels::imageTransformGrad(                                             \
          view(transforms, {t0, t1}), view(grad, {g0, g1, g2, g3}),            \
          imageTransformParams(interpolation, fillMode, fillBits), o);         \
    });                                                                        \
  }

extern "C" {
KCC_RT_DEFINE_IMAGE_TRANSFORM(float, f32)
KCC_RT_DEFINE_IMAGE_TRANSFORM(double, f64)
}

namespace {

kernels::RecurrenceParams recurrenceParams(int64_t cell, int64_t resetAfter,
                                           int64_t activation,
                                           int64_t recurrentActivation,
                                           int64_t reverse) {
  kernels::RecurrenceParams p;
  p.cell = static_cast<kernels::RecurrentCell>(cell);
  p.resetAfter = resetAfter != 0;
  p.activation = static_cast<kernels::RecurrentActivation>(activation);
  p.recurrentActivation =
      static_cast<kernels::RecurrentActivation>(recurrentActivation);
  p.reverse = reverse != 0;
  return p;
}

} // namespace

#define KCC_RT_DEFINE_RECURRENCE(T, S)                                         \
  void kcc_rt_recurrence_step_##S(                                             \
      const T *x, const T *kernel, const T *initial, const T *rbias,           \
      T *states, int64_t step, int64_t steps, int64_t batch, int64_t units,    \
      int64_t cell, int64_t resetAfter, int64_t activation,                    \
      int64_t recurrentActivation, int64_t reverse) {                          \
    guarded("recurrence", [&] {                                                \
      kernels::recurrenceStep<T>(                                              \
          recurrenceParams(cell, resetAfter, activation, recurrentActivation,  \
                           reverse),                                           \
          {steps, batch, units}, x, kernel, initial, rbias, states, step);     \
    });                                                                        \
  }                                                                            \
  void kcc_rt_recurrence_grad_step_##S(                                        \
      const T *kernel, const T *initial, const T *states, const T *gradStates, \
      T *grad, int64_t step, int64_t steps, int64_t batch, int64_t units,      \
      int64_t cell, int64_t resetAfter, int64_t activation,                    \
      int64_t recurrentActivation, int64_t reverse) {                          \
    guarded("recurrence_grad", [&] {                                           \
      kernels::recurrenceGradStep<T>(                                          \
          recurrenceParams(cell, resetAfter, activation, recurrentActivation,  \
                           reverse),                                           \
          {steps, batch, units}, kernel, initial, states, gradStates, grad,    \
          step);                                                               \
    });                                                                        \
  }

extern "C" {
KCC_RT_DEFINE_RECURRENCE(float, f32)
KCC_RT_DEFINE_RECURRENCE(double, f64)
}

namespace {

/// The LLVM OpenMP runtime entry points MLIR's OpenMP translation emits
/// (parallel regions, static worksharing loops, their barriers).
constexpr const char *kOpenMPEntryPoints[] = {
    "__kmpc_global_thread_num",
    "__kmpc_fork_call",
    "__kmpc_for_static_init_4",
    "__kmpc_for_static_init_4u",
    "__kmpc_for_static_init_8",
    "__kmpc_for_static_init_8u",
    "__kmpc_for_static_fini",
    "__kmpc_barrier",
    "__kmpc_cancel_barrier",
    "__kmpc_push_num_threads",
    "__kmpc_serialized_parallel",
    "__kmpc_end_serialized_parallel",
    "__kmpc_flush",
    "__kmpc_critical",
    "__kmpc_end_critical",
    "__kmpc_reduce",
    "__kmpc_end_reduce",
    "__kmpc_reduce_nowait",
    "__kmpc_end_reduce_nowait",
    "omp_get_thread_num",
    "omp_get_num_threads",
};

} // namespace

std::vector<std::pair<std::string, void *>> kcc::jit::openMPRuntimeSymbols() {
  // LLVM's libomp, linked into every kcc program ahead of libgomp (see the
  // top-level CMakeLists.txt), is the process's one OpenMP runtime: the
  // kernels and oneDNN reach it through its GOMP_* entry points, generated
  // code through these. Bound by name so the JIT needs no process-wide
  // symbol search.
  static void *handle = ::dlopen("libomp.so.5", RTLD_NOW | RTLD_NOLOAD);
  std::vector<std::pair<std::string, void *>> symbols;
  for (const char *name : kOpenMPEntryPoints)
    if (void *p = handle ? ::dlsym(handle, name) : nullptr)
      symbols.emplace_back(name, p);
  return symbols;
}

std::vector<std::pair<std::string, void *>> kcc::jit::libraryCallSymbols() {
  std::vector<std::pair<std::string, void *>> symbols;
#define KCC_RT_SYM(NAME)                                                       \
  symbols.emplace_back("kcc_rt_" #NAME "_f32",                                 \
                       reinterpret_cast<void *>(&kcc_rt_##NAME##_f32));        \
  symbols.emplace_back("kcc_rt_" #NAME "_f64",                                 \
                       reinterpret_cast<void *>(&kcc_rt_##NAME##_f64));
  KCC_RT_SYM(matmul)
  KCC_RT_SYM(matmul_epilogue)
  KCC_RT_SYM(batch_matmul)
  KCC_RT_SYM(conv2d)
  KCC_RT_SYM(conv2d_epilogue)
  KCC_RT_SYM(conv2d_backprop_input)
  KCC_RT_SYM(conv2d_backprop_filter)
  KCC_RT_SYM(max_pool2d)
  KCC_RT_SYM(max_pool2d_relu)
  KCC_RT_SYM(avg_pool2d)
  KCC_RT_SYM(max_pool2d_grad)
  KCC_RT_SYM(max_pool2d_grad_relu)
  KCC_RT_SYM(avg_pool2d_grad)
  KCC_RT_SYM(avg_pool2d_grad_relu)
  KCC_RT_SYM(avg_pool2d_grad_tanh)
  KCC_RT_SYM(avg_pool2d_grad_sigmoid)
  KCC_RT_SYM(gather_i32)
  KCC_RT_SYM(gather_i64)
  KCC_RT_SYM(gather_grad_i32)
  KCC_RT_SYM(gather_grad_i64)
  KCC_RT_SYM(recurrence_step)
  KCC_RT_SYM(recurrence_grad_step)
  KCC_RT_SYM(ctc_loss)
  KCC_RT_SYM(ctc_loss_grad)
  KCC_RT_SYM(image_transform)
  KCC_RT_SYM(image_transform_grad)
#undef KCC_RT_SYM
#define KCC_RT_SYM_BF16(NAME)                                                  \
  symbols.emplace_back("kcc_rt_" #NAME "_bf16",                                \
                       reinterpret_cast<void *>(&kcc_rt_##NAME##_bf16));
  KCC_RT_SYM_BF16(matmul)
  KCC_RT_SYM_BF16(batch_matmul)
  KCC_RT_SYM_BF16(conv2d)
  KCC_RT_SYM_BF16(conv2d_backprop_input)
  KCC_RT_SYM_BF16(conv2d_backprop_filter)
#undef KCC_RT_SYM_BF16
  for (auto &entry : openMPRuntimeSymbols())
    symbols.push_back(entry);
  return symbols;
}
