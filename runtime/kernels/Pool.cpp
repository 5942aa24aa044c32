//===- Pool.cpp - NHWC max/avg pooling, their gradients, window sizes -----===//
//
// Plain loops in NHWC: the innermost loop always runs over channels, which
// are contiguous, so it vectorizes. Padded positions are skipped rather than
// materialized: max pooling never sees them and average pooling divides by
// the number of real elements in the window (Keras/TF "SAME" behaviour).
// A window holding a NaN pools to NaN, as in TF.
//
// The gradients scatter into the input gradient; windows overlap across
// output positions but never across channels, so the parallel tasks are
// (image, channel block) pairs and need no atomics.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

/// Channels per gradient task.
constexpr int64_t kChannelBlock = 64;

/// Pooling geometry, validated against the arrays' shapes.
struct Geom {
  int64_t n, h, w, c, oh, ow, padT, padL;
  Pool2DParams p;

  int64_t inOffset(int64_t b, int64_t y, int64_t x) const {
    return ((b * h + y) * w + x) * c;
  }
  int64_t outOffset(int64_t b, int64_t y, int64_t x) const {
    return ((b * oh + y) * ow + x) * c;
  }
  /// The window of output row y clipped to the input: rows [y0, y1).
  void rows(int64_t y, int64_t &y0, int64_t &y1) const {
    y0 = y * p.strideH - padT;
    y1 = std::min(h, y0 + p.windowH);
    y0 = std::max<int64_t>(0, y0);
  }
  void cols(int64_t x, int64_t &x0, int64_t &x1) const {
    x0 = x * p.strideW - padL;
    x1 = std::min(w, x0 + p.windowW);
    x0 = std::max<int64_t>(0, x0);
  }
};

Geom makeGeom(const char *op, const NDArray &x, const NDArray &y,
              const Pool2DParams &p) {
  if (x.rank() != 4)
    fail(op, "expects NHWC input, got " + shapeToString(x.shape()));
  Geom g{x.dim(0), x.dim(1), x.dim(2), x.dim(3), 0, 0, 0, 0, p};
  g.oh = windowOutputSize(g.h, p.windowH, p.strideH, 1, p.padding);
  g.ow = windowOutputSize(g.w, p.windowW, p.strideW, 1, p.padding);
  g.padT = windowPadBefore(g.h, p.windowH, p.strideH, 1, p.padding);
  g.padL = windowPadBefore(g.w, p.windowW, p.strideW, 1, p.padding);
  Shape expected{g.n, g.oh, g.ow, g.c};
  if (y.shape() != expected || y.dtype() != x.dtype())
    fail(op, "pooled shape of " + shapeToString(x.shape()) + " is " +
                 shapeToString(expected) + ", got " + shapeToString(y.shape()));
  if (x.dtype() != DType::F32 && x.dtype() != DType::F64)
    fail(op, std::string("unsupported dtype ") + dtypeName(x.dtype()));
  return g;
}

template <typename T, bool IsMax>
void poolForward(const Geom &g, const T *x, T *out, bool relu = false) {
  runTasks(g.n * g.oh, g.n * g.h * g.w * g.c, [&](int64_t t) {
    int64_t b = t / g.oh, oy = t % g.oh, y0, y1;
    g.rows(oy, y0, y1);
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int64_t x0, x1;
      g.cols(ox, x0, x1);
      T *__restrict o = out + g.outOffset(b, oy, ox);
      std::fill(o, o + g.c, IsMax ? -std::numeric_limits<T>::infinity() : T(0));
      for (int64_t iy = y0; iy < y1; ++iy)
        for (int64_t ix = x0; ix < x1; ++ix) {
          const T *__restrict src = x + g.inOffset(b, iy, ix);
          for (int64_t ch = 0; ch < g.c; ++ch) {
            if constexpr (IsMax)
              o[ch] = nanMax(src[ch], o[ch]);
            else
              o[ch] += src[ch];
          }
        }
      if constexpr (!IsMax) {
        T scale = T(1) / T((y1 - y0) * (x1 - x0));
        for (int64_t ch = 0; ch < g.c; ++ch)
          o[ch] *= scale;
      } else if (relu) {
        for (int64_t ch = 0; ch < g.c; ++ch)
          o[ch] = o[ch] < T(0) ? T(0) : o[ch];
      }
    }
  });
}

/// Runs task(b, c0, c1) over (image, channel block) pairs.
template <typename Task> void perChannelBlock(const Geom &g, const Task &task) {
  int64_t blocks = (g.c + kChannelBlock - 1) / kChannelBlock;
  runTasks(g.n * blocks, g.n * g.h * g.w * g.c, [&](int64_t t) {
    int64_t b = t / blocks, c0 = (t % blocks) * kChannelBlock;
    task(b, c0, std::min(g.c, c0 + kChannelBlock));
  });
}

template <typename T>
void maxPoolGrad(const Geom &g, const T *x, const T *gradOut, T *gradIn) {
  perChannelBlock(g, [&](int64_t b, int64_t c0, int64_t c1) {
    T best[kChannelBlock];
    int64_t where[kChannelBlock];
    int64_t w = c1 - c0;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      int64_t y0, y1;
      g.rows(oy, y0, y1);
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t x0, x1;
        g.cols(ox, x0, x1);
        for (int64_t j = 0; j < w; ++j) {
          best[j] = -std::numeric_limits<T>::infinity();
          where[j] = -1;
        }
        // Row-major window scan; strict > keeps the first maximum, and the
        // first NaN (the forward pass's result) takes the gradient.
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            int64_t base = g.inOffset(b, iy, ix) + c0;
            for (int64_t j = 0; j < w; ++j) {
              T v = x[base + j];
              bool better =
                  v > best[j] || where[j] < 0 || (v != v && best[j] == best[j]);
              best[j] = better ? v : best[j];
              where[j] = better ? base + j : where[j];
            }
          }
        const T *gr = gradOut + g.outOffset(b, oy, ox) + c0;
        for (int64_t j = 0; j < w; ++j)
          gradIn[where[j]] += gr[j];
      }
    }
  });
}

/// Windows that tile the input (window == stride, no padding): each input
/// element belongs to at most one window.
bool windowsTile(const Geom &g) {
  return g.p.windowH == g.p.strideH && g.p.windowW == g.p.strideW &&
         g.padT == 0 && g.padL == 0;
}

/// maxPoolGrad for tiling windows, optionally masked by x > 0 (the
/// gradient of a relu before the pooling). A window's inputs are all read
/// before any of its gradients is written, and windows do not overlap, so
/// gradIn may be x itself: the gradient overwrites the activation.
template <typename T>
void maxPoolGradTiled(const Geom &g, const T *x, const T *gradOut, T *gradIn,
                      bool reluMask) {
  perChannelBlock(g, [&](int64_t b, int64_t c0, int64_t c1) {
    // Float-only inner loops over contiguous channels, so they vectorize:
    // the window's maximum first, then each position in window order takes
    // the gradient if it equals the maximum and no earlier one did (the
    // first maximum, as maxPoolGrad; a NaN window's first NaN).
    T best[kChannelBlock], grad[kChannelBlock], taken[kChannelBlock];
    int64_t w = c1 - c0;
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      // Clipped: Same padding puts its extra row/column at the bottom/right.
      int64_t y0 = oy * g.p.strideH, y1 = std::min(y0 + g.p.windowH, g.h);
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        int64_t x0 = ox * g.p.strideW, x1 = std::min(x0 + g.p.windowW, g.w);
        const T *first = x + g.inOffset(b, y0, x0) + c0;
        for (int64_t j = 0; j < w; ++j)
          best[j] = first[j];
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            const T *xi = x + g.inOffset(b, iy, ix) + c0;
            for (int64_t j = 0; j < w; ++j)
              best[j] = nanMax(xi[j], best[j]);
          }
        const T *gr = gradOut + g.outOffset(b, oy, ox) + c0;
        for (int64_t j = 0; j < w; ++j) {
          grad[j] = reluMask && !(best[j] > T(0)) ? T(0) : gr[j];
          taken[j] = T(0);
        }
        for (int64_t iy = y0; iy < y1; ++iy)
          for (int64_t ix = x0; ix < x1; ++ix) {
            int64_t base = g.inOffset(b, iy, ix) + c0;
            for (int64_t j = 0; j < w; ++j) {
              // A NaN maximum matches the first NaN.
              T v = x[base + j];
              bool hit = taken[j] == T(0) &&
                         (v == best[j] || (v != v && best[j] != best[j]));
              taken[j] = hit ? T(1) : taken[j];
              gradIn[base + j] = hit ? grad[j] : T(0);
            }
          }
      }
    }
    // Rows and columns no window covers get no gradient.
    for (int64_t iy = 0; iy < g.h; ++iy)
      for (int64_t ix = 0; ix < g.w; ++ix)
        if (iy >= g.oh * g.p.strideH || ix >= g.ow * g.p.strideW)
          for (int64_t j = 0; j < w; ++j)
            gradIn[g.inOffset(b, iy, ix) + c0 + j] = T(0);
  });
}

/// Adds each window's share of gradOut to image b's channels [c0, c1) of
/// gradIn. Not inlined, so that avgPoolGrad and avgPoolGradActivation
/// (compiled without FP contraction) round its sums alike.
template <typename T>
__attribute__((noinline)) void spreadAvgGrad(const Geom &g, const T *gradOut,
                                             T *gradIn, int64_t b, int64_t c0,
                                             int64_t c1) {
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    int64_t y0, y1;
    g.rows(oy, y0, y1);
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int64_t x0, x1;
      g.cols(ox, x0, x1);
      T scale = T(1) / T((y1 - y0) * (x1 - x0));
      const T *__restrict gr = gradOut + g.outOffset(b, oy, ox);
      for (int64_t iy = y0; iy < y1; ++iy)
        for (int64_t ix = x0; ix < x1; ++ix) {
          T *__restrict gi = gradIn + g.inOffset(b, iy, ix);
          for (int64_t ch = c0; ch < c1; ++ch)
            gi[ch] += gr[ch] * scale;
        }
    }
  }
}

template <typename T>
void avgPoolGrad(const Geom &g, const T *gradOut, T *gradIn) {
  perChannelBlock(g, [&](int64_t b, int64_t c0, int64_t c1) {
    spreadAvgGrad(g, gradOut, gradIn, b, c0, c1);
  });
}

// Contraction would round `1 - y * y` once (an FMA) where the kc ops it
// fuses round twice: off for the activation gradients below, so they stay
// bit for bit the unfused ops'.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

/// What the average-pooling gradient multiplies its shares by: nothing, or
/// the gradient of the activation before the pooling.
enum class Factor { None, Relu, Tanh, Sigmoid };

/// The gradient of activation F at an element whose activation output is
/// v, times the pooled gradient r: the kc ops of
/// ir/gradients/ElementwiseGradients.cpp, rounded as they are.
template <Factor F, typename T> inline T activationGrad(T v, T r) {
  if constexpr (F == Factor::Relu)
    return v > T(0) ? r : T(0);
  else if constexpr (F == Factor::Tanh)
    return r * (T(1) - v * v);
  else if constexpr (F == Factor::Sigmoid)
    return r * (v * (T(1) - v));
  else
    return r;
}

/// The average-pooling gradient for windows that tile the input, times
/// factor F: each input element gets one window's share, so it is written
/// once (no zeroing first), from the y read just before it (gradIn may be
/// y). A task is one output row of an image: its windows' shares are laid
/// out along one input row (`0 + share`: rounded as the share summed into
/// a zeroed buffer, contracted or not; 0 where no window reaches), which
/// every input row of the windows then takes in one contiguous pass.
template <Factor F, typename T>
void avgPoolGradTiled(const Geom &g, const T *y, const T *gradOut, T *gradIn) {
  int64_t row = g.w * g.c;
  runTasks(g.n * g.oh, g.n * g.h * row, [&](int64_t t) {
    thread_local std::vector<T> shares;
    shares.assign(row, T(0));
    T *__restrict s = shares.data();
    int64_t b = t / g.oh, oy = t % g.oh, y0, y1;
    g.rows(oy, y0, y1);
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int64_t x0, x1;
      g.cols(ox, x0, x1);
      T scale = T(1) / T((y1 - y0) * (x1 - x0));
      const T *__restrict gr = gradOut + g.outOffset(b, oy, ox);
      for (int64_t ix = x0; ix < x1; ++ix)
        for (int64_t ch = 0; ch < g.c; ++ch)
          s[ix * g.c + ch] = T(0) + gr[ch] * scale;
    }
    // The last row of windows also takes the rows no window reaches.
    int64_t end = oy == g.oh - 1 ? g.h : y1;
    for (int64_t iy = y0; iy < end; ++iy) {
      if (iy == y1)
        std::fill(s, s + row, T(0));
      int64_t at = g.inOffset(b, iy, 0);
      if constexpr (F == Factor::None)
        std::copy(s, s + row, gradIn + at);
      else
        for (int64_t j = 0; j < row; ++j)
          gradIn[at + j] = activationGrad<F>(y[at + j], s[j]);
    }
  });
}

/// avgPoolGrad followed by activationGrad over gradIn for windows that
/// overlap: an image's channel block is summed by avgPoolGrad's own
/// spreadAvgGrad, then multiplied while it is still in cache.
template <Factor F, typename T>
void avgPoolGradOverlapping(const Geom &g, const T *y, const T *gradOut,
                            T *gradIn) {
  perChannelBlock(g, [&](int64_t b, int64_t c0, int64_t c1) {
    for (int64_t iy = 0; iy < g.h; ++iy)
      for (int64_t ix = 0; ix < g.w; ++ix) {
        T *gi = gradIn + g.inOffset(b, iy, ix);
        for (int64_t ch = c0; ch < c1; ++ch)
          gi[ch] = T(0);
      }
    spreadAvgGrad(g, gradOut, gradIn, b, c0, c1);
    for (int64_t iy = 0; iy < g.h; ++iy)
      for (int64_t ix = 0; ix < g.w; ++ix) {
        int64_t at = g.inOffset(b, iy, ix);
        for (int64_t ch = c0; ch < c1; ++ch)
          gradIn[at + ch] = activationGrad<F>(y[at + ch], gradIn[at + ch]);
      }
  });
}

template <Factor F, typename T>
void avgPoolGradActivation(const Geom &g, const T *y, const T *gradOut,
                           T *gradIn) {
  if (windowsTile(g))
    avgPoolGradTiled<F>(g, y, gradOut, gradIn);
  else
    avgPoolGradOverlapping<F>(g, y, gradOut, gradIn);
}

#pragma GCC pop_options

} // namespace

int64_t kernels::windowOutputSize(int64_t in, int64_t window, int64_t stride,
                                  int64_t dilation, Padding padding) {
  if (window < 1 || stride < 1 || dilation < 1 || in < 0)
    throw KernelError("window: invalid size " + std::to_string(in) +
                      ", window " + std::to_string(window) + ", stride " +
                      std::to_string(stride) + ", dilation " +
                      std::to_string(dilation));
  if (padding == Padding::Same)
    return (in + stride - 1) / stride;
  int64_t extent = (window - 1) * dilation + 1;
  return in >= extent ? (in - extent) / stride + 1 : 0;
}

int64_t kernels::windowPadBefore(int64_t in, int64_t window, int64_t stride,
                                 int64_t dilation, Padding padding) {
  if (padding == Padding::Valid)
    return 0;
  int64_t out = windowOutputSize(in, window, stride, dilation, padding);
  int64_t total = (out - 1) * stride + (window - 1) * dilation + 1 - in;
  return std::max<int64_t>(total, 0) / 2; // The odd row goes after.
}

void kernels::maxPool2d(const NDArray &x, const Pool2DParams &p, NDArray &out) {
  Geom g = makeGeom("maxPool2d", x, out, p);
  if (x.dtype() == DType::F32)
    poolForward<float, true>(g, x.data<float>(), out.data<float>());
  else
    poolForward<double, true>(g, x.data<double>(), out.data<double>());
}

void kernels::maxPool2dRelu(const NDArray &x, const Pool2DParams &p,
                            NDArray &out) {
  Geom g = makeGeom("maxPool2dRelu", x, out, p);
  if (x.dtype() == DType::F32)
    poolForward<float, true>(g, x.data<float>(), out.data<float>(), true);
  else
    poolForward<double, true>(g, x.data<double>(), out.data<double>(), true);
}

void kernels::avgPool2d(const NDArray &x, const Pool2DParams &p, NDArray &out) {
  Geom g = makeGeom("avgPool2d", x, out, p);
  if (x.dtype() == DType::F32)
    poolForward<float, false>(g, x.data<float>(), out.data<float>());
  else
    poolForward<double, false>(g, x.data<double>(), out.data<double>());
}

void kernels::maxPool2dGrad(const NDArray &x, const NDArray &gradOut,
                            const Pool2DParams &p, NDArray &gradInput,
                            bool reluMask) {
  Geom g = makeGeom("maxPool2dGrad", x, gradOut, p);
  if (gradInput.shape() != x.shape() || gradInput.dtype() != x.dtype())
    fail("maxPool2dGrad", "input gradient " + shapeToString(gradInput.shape()) +
                              " does not match input " +
                              shapeToString(x.shape()));
  bool aliased = gradInput.rawData() == x.rawData();
  if (windowsTile(g)) {
    if (x.dtype() == DType::F32)
      maxPoolGradTiled<float>(g, x.data<float>(), gradOut.data<float>(),
                              gradInput.data<float>(), reluMask);
    else
      maxPoolGradTiled<double>(g, x.data<double>(), gradOut.data<double>(),
                               gradInput.data<double>(), reluMask);
    return;
  }
  if (aliased || reluMask)
    fail("maxPool2dGrad", "in place and relu-masked gradients need windows "
                          "that tile the input");
  std::memset(gradInput.rawData(), 0, gradInput.bytes());
  if (x.dtype() == DType::F32)
    maxPoolGrad<float>(g, x.data<float>(), gradOut.data<float>(),
                       gradInput.data<float>());
  else
    maxPoolGrad<double>(g, x.data<double>(), gradOut.data<double>(),
                        gradInput.data<double>());
}

void kernels::avgPool2dGrad(const NDArray &gradOut, const Pool2DParams &p,
                            NDArray &gradInput) {
  // The input only contributes its shape, which gradInput carries.
  Geom g = makeGeom("avgPool2dGrad", gradInput, gradOut, p);
  if (windowsTile(g)) {
    // y is not read without a factor.
    if (gradInput.dtype() == DType::F32)
      avgPoolGradTiled<Factor::None, float>(g, nullptr, gradOut.data<float>(),
                                            gradInput.data<float>());
    else
      avgPoolGradTiled<Factor::None, double>(g, nullptr, gradOut.data<double>(),
                                             gradInput.data<double>());
    return;
  }
  std::memset(gradInput.rawData(), 0, gradInput.bytes());
  if (gradInput.dtype() == DType::F32)
    avgPoolGrad<float>(g, gradOut.data<float>(), gradInput.data<float>());
  else
    avgPoolGrad<double>(g, gradOut.data<double>(), gradInput.data<double>());
}

void kernels::avgPool2dGrad(const NDArray &y, const NDArray &gradOut,
                            const Pool2DParams &p, PoolGradActivation act,
                            NDArray &gradInput) {
  Geom g = makeGeom("avgPool2dGrad", gradInput, gradOut, p);
  if (y.shape() != gradInput.shape() || y.dtype() != gradInput.dtype())
    fail("avgPool2dGrad", "activation " + shapeToString(y.shape()) +
                              " does not match the input gradient " +
                              shapeToString(gradInput.shape()));
  if (y.rawData() == gradInput.rawData() && !windowsTile(g))
    fail("avgPool2dGrad", "an in-place gradient needs windows that tile the "
                          "input");
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T *yv = y.data<T>(), *gr = gradOut.data<T>();
    T *gi = gradInput.data<T>();
    switch (act) {
    case PoolGradActivation::Relu:
      return avgPoolGradActivation<Factor::Relu>(g, yv, gr, gi);
    case PoolGradActivation::Tanh:
      return avgPoolGradActivation<Factor::Tanh>(g, yv, gr, gi);
    case PoolGradActivation::Sigmoid:
      return avgPoolGradActivation<Factor::Sigmoid>(g, yv, gr, gi);
    }
  };
  if (gradInput.dtype() == DType::F32)
    run(float());
  else
    run(double());
}
