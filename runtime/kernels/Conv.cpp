//===- Conv.cpp - 2D convolution and its two backprops --------------------===//
//
// f32 runs oneDNN's convolution primitives on the NHWC activations as they
// are laid out; the HWIO filter is reordered into the blocked layout oneDNN's
// direct convolutions want, per call. Where that reorder costs as much as the
// product (1x1 convolutions, filters that outweigh their column matrix,
// as in the deep layers of a network on small images), and where oneDNN has
// no direct convolution for a pass and would fall back to its own im2col
// (grouped convolutions with a few channels a group, some dilated backward
// passes), the passes run as kcc's GEMMs on the arrays as they lie instead
// (ConvAsGemm.cpp). The forward primitive descriptor doubles as the hint the
// backward ones require, so all three primitives for one geometry live in
// one cache entry (per thread), created on first use.
//
// f64, the numerics oracle path, uses direct loops. Both backprops are written
// as gathers (each output element sums its own terms) so they parallelize
// without atomics.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/ConvGeometry.h"
#include "runtime/kernels/DnnlContext.h"
#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

using Geom = ConvGeometry;
using Pass = ConvPass;

Geom makeGeom(const char *op, const Shape &in, const Shape &filter,
              const Shape &out, const Conv2DParams &p) {
  auto mismatch = [&](const std::string &why) {
    throw KernelError(std::string(op) + ": " + why + ": input " +
                      shapeToString(in) + ", filter " + shapeToString(filter) +
                      ", output " + shapeToString(out));
  };
  if (in.size() != 4 || filter.size() != 4 || out.size() != 4)
    mismatch("expects NHWC input/output and an HWIO filter");
  if (p.groups < 1 || in[3] % p.groups != 0 || filter[3] % p.groups != 0)
    mismatch("channels are not multiples of groups (" +
             std::to_string(p.groups) + ")");
  if (filter[2] * p.groups != in[3])
    mismatch("filter input channels do not match the input");
  Geom g{in[0],       in[1], in[2], in[3],     filter[0], filter[1],
         filter[3],   0,     0,     p.strideH, p.strideW, p.dilationH,
         p.dilationW, 0,     0,     0,         0,         p.groups};
  g.oh = windowOutputSize(g.h, g.kh, g.sh, g.dh, p.padding);
  g.ow = windowOutputSize(g.w, g.kw, g.sw, g.dw, p.padding);
  g.padT = windowPadBefore(g.h, g.kh, g.sh, g.dh, p.padding);
  g.padL = windowPadBefore(g.w, g.kw, g.sw, g.dw, p.padding);
  if (p.padding == Padding::Same) {
    g.padB =
        std::max<int64_t>((g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.h, 0) -
        g.padT;
    g.padR =
        std::max<int64_t>((g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.w, 0) -
        g.padL;
  }
  if (out != Shape{g.n, g.oh, g.ow, g.o})
    mismatch("output shape should be " + shapeToString({g.n, g.oh, g.ow, g.o}));
  return g;
}

void checkDtypes(const char *op, const NDArray &a, const NDArray &b,
                 const NDArray &c) {
  if (a.dtype() != b.dtype() || a.dtype() != c.dtype() ||
      (a.dtype() != DType::F32 && a.dtype() != DType::F64))
    throw KernelError(std::string(op) +
                      ": expects f32 or f64 operands of one "
                      "dtype, got " +
                      dtypeName(a.dtype()) + ", " + dtypeName(b.dtype()) +
                      ", " + dtypeName(c.dtype()));
}

//===----------------------------------------------------------------------===//
// oneDNN (f32)
//===----------------------------------------------------------------------===//

/// The filter as one primitive wants it. Primitives are created with the
/// filter's layout left to oneDNN (`any`): with NHWC activations and a
/// fixed HWIO filter oneDNN 2.x falls back to im2col + GEMM, with a blocked
/// filter it runs its direct JIT convolutions, about twice as fast. The
/// filter (a few KB) is reordered per call; the activations never are.
struct Filter {
  dnnl::memory::desc desc;
  dnnl::memory blocked;  ///< scratch in `desc`, when it is not HWIO
  dnnl::reorder reorder; ///< HWIO -> desc, or desc -> HWIO for a gradient
};

struct ConvEntry {
  dnnl::memory::desc src, wei, dst;
  dnnl::convolution_forward::primitive_desc fwdPd;
  dnnl::convolution_forward fwd;
  dnnl::convolution_backward_data bwdData;
  dnnl::convolution_backward_weights bwdWeights;
  Filter fwdFilter, bwdDataFilter, bwdWeightsFilter;
  bool hasBwdData = false, hasBwdWeights = false;
  /// Per pass: oneDNN chose its im2col + GEMM implementation, not a direct
  /// convolution (kcc's own lowering then runs instead).
  std::array<bool, 3> im2col = {false, false, false};
  /// Forward primitives with an epilogue, by epilogueKind().
  std::map<int, std::pair<dnnl::convolution_forward, Filter>> fused;
};

/// The filter's logical dims for oneDNN: OIHW, or GOIHW when grouped.
dnnl::memory::dims weiDims(const Geom &g) {
  if (g.grp == 1)
    return {g.o, g.c, g.kh, g.kw};
  return {g.grp, g.groupOut(), g.groupIn(), g.kh, g.kw};
}

/// The filter as kcc stores it, HWIO ([KH, KW, C/G, F], F = G x F/G).
dnnl::memory::desc hwioDesc(const Geom &g) {
  using dt = dnnl::memory::data_type;
  if (g.grp == 1)
    return dnnl::memory::desc(weiDims(g), dt::f32,
                              dnnl::memory::format_tag::hwio);
  int64_t gi = g.groupIn();
  return dnnl::memory::desc(
      weiDims(g), dt::f32,
      dnnl::memory::dims{g.groupOut(), 1, g.o, g.kw * gi * g.o, gi * g.o});
}

/// The Filter for a primitive wanting `want`; `gradient`: the primitive
/// writes the filter (reorder back to HWIO after it runs).
Filter makeFilter(const dnnl::memory::desc &want,
                  const dnnl::memory::desc &hwio, bool gradient) {
  Filter f;
  f.desc = want;
  if (want == hwio)
    return f;
  dnnl::engine &eng = cpuEngine();
  f.blocked = dnnl::memory(want, eng);
  f.reorder =
      gradient
          ? dnnl::reorder(dnnl::reorder::primitive_desc(eng, want, eng, hwio))
          : dnnl::reorder(dnnl::reorder::primitive_desc(eng, hwio, eng, want));
  return f;
}

/// The filter memory to pass a primitive: the caller's HWIO array, or the
/// blocked scratch (filled from it unless the primitive writes it).
dnnl::memory filterArg(const Filter &f, dnnl::memory &hwio, bool gradient) {
  if (!f.blocked)
    return hwio;
  if (!gradient)
    f.reorder.execute(cpuStream(),
                      {{DNNL_ARG_FROM, hwio},
                       {DNNL_ARG_TO, const_cast<dnnl::memory &>(f.blocked)}});
  return f.blocked;
}

/// After a primitive wrote the filter gradient into the scratch: to HWIO.
void filterResult(const Filter &f, dnnl::memory &hwio) {
  if (f.blocked)
    f.reorder.execute(cpuStream(),
                      {{DNNL_ARG_FROM, const_cast<dnnl::memory &>(f.blocked)},
                       {DNNL_ARG_TO, hwio}});
}

/// The primitive variants: relu never changes the primitive.
int epilogueKind(const Epilogue &e) { return e.bias ? 1 : 0; }

/// The forward primitive of `e` with `epilogue` fused: bias inside the
/// convolution. Relu runs after it (reluInPlace: oneDNN's relu post-op
/// turns NaN into 0).
const std::pair<dnnl::convolution_forward, Filter> &
fusedForward(ConvEntry &e, const Geom &g, const Epilogue &epilogue) {
  int kind = epilogueKind(epilogue);
  auto it = e.fused.find(kind);
  if (it != e.fused.end())
    return it->second;
  using namespace dnnl;
  memory::dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1};
  memory::dims padL{g.padT, g.padL}, padR{g.padB, g.padR};
  primitive_attr attr;
  memory::desc bias({g.o}, memory::data_type::f32, memory::format_tag::a);
  memory::desc anyWei(weiDims(g), memory::data_type::f32,
                      memory::format_tag::any);
  auto d = epilogue.bias
               ? convolution_forward::desc(
                     prop_kind::forward_training, algorithm::convolution_direct,
                     e.src, anyWei, bias, e.dst, strides, dilates, padL, padR)
               : convolution_forward::desc(
                     prop_kind::forward_training, algorithm::convolution_direct,
                     e.src, anyWei, e.dst, strides, dilates, padL, padR);
  convolution_forward::primitive_desc pd(d, attr, cpuEngine());
  return e.fused
      .emplace(kind,
               std::make_pair(convolution_forward(pd),
                              makeFilter(pd.weights_desc(), e.wei, false)))
      .first->second;
}

/// Whether oneDNN implements a primitive as its own im2col + GEMM
/// ("gemm:jit", "x64:gemm:jit") rather than a direct convolution.
bool isIm2col(const dnnl::primitive_desc_base &pd) {
  return std::string(pd.impl_info_str()).find("gemm") != std::string::npos;
}

/// The cached entry for `g` with the primitive for `pass` created. Per
/// thread, as the GEMM cache (Matmul.cpp): a primitive executed by two
/// threads at once would share its scratch memory.
ConvEntry &getConv(const Geom &g, Pass pass) {
  thread_local std::map<std::array<int64_t, 18>, ConvEntry> cache;
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  using namespace dnnl;
  auto [it, inserted] = cache.try_emplace(g.key());
  ConvEntry &e = it->second;
  memory::dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1};
  memory::dims padL{g.padT, g.padL}, padR{g.padB, g.padR};
  memory::desc anyWei(weiDims(g), dt::f32, tag::any);
  try {
    if (inserted) {
      e.src = memory::desc({g.n, g.c, g.h, g.w}, dt::f32, tag::nhwc);
      e.wei = hwioDesc(g);
      e.dst = memory::desc({g.n, g.o, g.oh, g.ow}, dt::f32, tag::nhwc);
      convolution_forward::desc d(prop_kind::forward_training,
                                  algorithm::convolution_direct, e.src, anyWei,
                                  e.dst, strides, dilates, padL, padR);
      e.fwdPd = convolution_forward::primitive_desc(d, cpuEngine());
      e.fwd = convolution_forward(e.fwdPd);
      e.fwdFilter = makeFilter(e.fwdPd.weights_desc(), e.wei, false);
      e.im2col[int(Pass::Forward)] = isIm2col(e.fwdPd);
    }
    if (pass == Pass::BackwardData && !e.hasBwdData) {
      convolution_backward_data::desc d(algorithm::convolution_direct, e.src,
                                        anyWei, e.dst, strides, dilates, padL,
                                        padR);
      convolution_backward_data::primitive_desc pd(d, cpuEngine(), e.fwdPd);
      e.bwdData = convolution_backward_data(pd);
      e.bwdDataFilter = makeFilter(pd.weights_desc(), e.wei, false);
      e.im2col[int(Pass::BackwardData)] = isIm2col(pd);
      e.hasBwdData = true;
    }
    if (pass == Pass::BackwardWeights && !e.hasBwdWeights) {
      convolution_backward_weights::desc d(algorithm::convolution_direct, e.src,
                                           anyWei, e.dst, strides, dilates,
                                           padL, padR);
      convolution_backward_weights::primitive_desc pd(d, cpuEngine(), e.fwdPd);
      e.bwdWeights = convolution_backward_weights(pd);
      e.bwdWeightsFilter = makeFilter(pd.diff_weights_desc(), e.wei, true);
      e.im2col[int(Pass::BackwardWeights)] = isIm2col(pd);
      e.hasBwdWeights = true;
    }
  } catch (const dnnl::error &err) {
    if (inserted) // Never leave a half-built entry behind.
      cache.erase(it);
    throw KernelError(std::string("conv2d: oneDNN rejected the problem: ") +
                      err.what());
  }
  return e;
}

//===----------------------------------------------------------------------===//
// Direct loops (f64, and f32 where oneDNN has only its im2col for many
// groups: depthwise convolutions of 1-D data)
//===----------------------------------------------------------------------===//

int64_t work(const Geom &g) {
  return g.n * g.oh * g.ow * g.kh * g.kw * g.groupIn() * g.o;
}

template <typename T>
void convForward(const Geom &g, const T *x, const T *w, T *y) {
  int64_t gi = g.groupIn(), go = g.groupOut();
  runTasks(g.n * g.oh, work(g), [&](int64_t t) {
    int64_t b = t / g.oh, oy = t % g.oh;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      T *__restrict out = y + ((b * g.oh + oy) * g.ow + ox) * g.o;
      std::fill(out, out + g.o, T(0));
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        int64_t iy = inputPos(oy, ky, g.sh, g.dh, g.padT, g.h);
        for (int64_t kx = 0; iy >= 0 && kx < g.kw; ++kx) {
          int64_t ix = inputPos(ox, kx, g.sw, g.dw, g.padL, g.w);
          if (ix < 0)
            continue;
          const T *in = x + ((b * g.h + iy) * g.w + ix) * g.c;
          const T *tap = w + (ky * g.kw + kx) * gi * g.o;
          for (int64_t ic = 0; ic < g.c; ++ic) {
            T v = in[ic];
            const T *__restrict row = tap + (ic % gi) * g.o;
            int64_t first = ic / gi * go;
            for (int64_t oc = first; oc < first + go; ++oc)
              out[oc] += v * row[oc];
          }
        }
      }
    }
  });
}

template <typename T>
void convBackwardData(const Geom &g, const T *dy, const T *w, T *dx) {
  int64_t gi = g.groupIn(), go = g.groupOut();
  runTasks(g.n * g.h, work(g), [&](int64_t t) {
    int64_t b = t / g.h, iy = t % g.h;
    for (int64_t ix = 0; ix < g.w; ++ix) {
      T *__restrict gin = dx + ((b * g.h + iy) * g.w + ix) * g.c;
      std::fill(gin, gin + g.c, T(0));
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        int64_t oy = outputPos(iy, ky, g.sh, g.dh, g.padT, g.oh);
        for (int64_t kx = 0; oy >= 0 && kx < g.kw; ++kx) {
          int64_t ox = outputPos(ix, kx, g.sw, g.dw, g.padL, g.ow);
          if (ox < 0)
            continue;
          const T *__restrict grad = dy + ((b * g.oh + oy) * g.ow + ox) * g.o;
          const T *tap = w + (ky * g.kw + kx) * gi * g.o;
          for (int64_t ic = 0; ic < g.c; ++ic) {
            const T *__restrict row = tap + (ic % gi) * g.o;
            int64_t first = ic / gi * go;
            T s = 0;
            for (int64_t oc = first; oc < first + go; ++oc)
              s += grad[oc] * row[oc];
            gin[ic] += s;
          }
        }
      }
    }
  });
}

template <typename T>
void convBackwardFilter(const Geom &g, const T *x, const T *dy, T *dw) {
  int64_t gi = g.groupIn(), go = g.groupOut();
  runTasks(g.kh * g.kw, work(g), [&](int64_t t) {
    int64_t ky = t / g.kw, kx = t % g.kw;
    T *tap = dw + t * gi * g.o;
    std::fill(tap, tap + gi * g.o, T(0));
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        int64_t iy = inputPos(oy, ky, g.sh, g.dh, g.padT, g.h);
        for (int64_t ox = 0; iy >= 0 && ox < g.ow; ++ox) {
          int64_t ix = inputPos(ox, kx, g.sw, g.dw, g.padL, g.w);
          if (ix < 0)
            continue;
          const T *in = x + ((b * g.h + iy) * g.w + ix) * g.c;
          const T *__restrict grad = dy + ((b * g.oh + oy) * g.ow + ox) * g.o;
          for (int64_t ic = 0; ic < g.c; ++ic) {
            T v = in[ic];
            T *__restrict row = tap + (ic % gi) * g.o;
            int64_t first = ic / gi * go;
            for (int64_t oc = first; oc < first + go; ++oc)
              row[oc] += v * grad[oc];
          }
        }
      }
  });
}

/// One f32 pass in the direct loops, the bias added after the forward.
void runLoops(const Geom &g, Pass pass, const void *src, const void *wei,
              const void *dst, const Epilogue &epilogue) {
  auto *x = static_cast<float *>(const_cast<void *>(src));
  auto *w = static_cast<float *>(const_cast<void *>(wei));
  auto *y = static_cast<float *>(const_cast<void *>(dst));
  switch (pass) {
  case Pass::Forward:
    convForward(g, x, w, y);
    if (const NDArray *bias = epilogue.bias) {
      const float *b = bias->data<float>();
      int64_t rows = g.n * g.oh * g.ow;
      runTasks(rows, rows * g.o, [&](int64_t r) {
        for (int64_t c = 0; c < g.o; ++c)
          y[r * g.o + c] += b[c];
      });
    }
    return;
  case Pass::BackwardData:
    return convBackwardData(g, y, w, x);
  case Pass::BackwardWeights:
    return convBackwardFilter(g, x, y, w);
  }
}

/// Runs one pass; `src`, `wei`, `dst` are the three tensors in forward terms
/// (for the backprops the written one is a gradient).
void runDnnl(const Geom &g, Pass pass, const void *src, const void *wei,
             const void *dst, const Epilogue &epilogue = {}) {
  std::optional<GemmLowering> lowering = gemmLowering(g);
  auto asGemm = [&] {
    runConvAsGemm(g, *lowering, pass,
                  static_cast<float *>(const_cast<void *>(src)),
                  static_cast<float *>(const_cast<void *>(wei)),
                  static_cast<float *>(const_cast<void *>(dst)),
                  epilogue.bias ? epilogue.bias->data<float>() : nullptr);
  };
  if (lowering && gemmLoweringWins(g, *lowering))
    return asGemm();
  ConvEntry &e = getConv(g, pass);
  if (e.im2col[int(pass)]) {
    if (lowering && g.grp <= kMaxLoweredGroups)
      return asGemm();
    if (g.grp > kMaxLoweredGroups)
      return runLoops(g, pass, src, wei, dst, epilogue);
  }
  dnnl::engine &eng = cpuEngine();
  dnnl::memory ms(e.src, eng, const_cast<void *>(src));
  dnnl::memory mw(e.wei, eng, const_cast<void *>(wei));
  dnnl::memory md(e.dst, eng, const_cast<void *>(dst));
  switch (pass) {
  case Pass::Forward:
    if (epilogue.bias) {
      const std::pair<dnnl::convolution_forward, Filter> *prim;
      try {
        prim = &fusedForward(e, g, epilogue);
      } catch (const dnnl::error &err) {
        throw KernelError(
            std::string("conv2d: oneDNN rejected the epilogue: ") + err.what());
      }
      std::unordered_map<int, dnnl::memory> args{
          {DNNL_ARG_SRC, ms},
          {DNNL_ARG_WEIGHTS, filterArg(prim->second, mw, false)},
          {DNNL_ARG_DST, md}};
      if (epilogue.bias)
        args.emplace(
            DNNL_ARG_BIAS,
            dnnl::memory({{g.o},
                          dnnl::memory::data_type::f32,
                          dnnl::memory::format_tag::a},
                         eng, const_cast<void *>(epilogue.bias->rawData())));
      prim->first.execute(cpuStream(), args);
      break;
    }
    e.fwd.execute(cpuStream(),
                  {{DNNL_ARG_SRC, ms},
                   {DNNL_ARG_WEIGHTS, filterArg(e.fwdFilter, mw, false)},
                   {DNNL_ARG_DST, md}});
    break;
  case Pass::BackwardData:
    e.bwdData.execute(
        cpuStream(), {{DNNL_ARG_DIFF_SRC, ms},
                      {DNNL_ARG_WEIGHTS, filterArg(e.bwdDataFilter, mw, false)},
                      {DNNL_ARG_DIFF_DST, md}});
    break;
  case Pass::BackwardWeights:
    e.bwdWeights.execute(
        cpuStream(),
        {{DNNL_ARG_SRC, ms},
         {DNNL_ARG_DIFF_WEIGHTS, filterArg(e.bwdWeightsFilter, mw, true)},
         {DNNL_ARG_DIFF_DST, md}});
    filterResult(e.bwdWeightsFilter, mw);
    break;
  }
  cpuStream().wait();
}

} // namespace

namespace {
/// The epilogue in plain loops (f64, empty inputs).
template <typename T>
void applyEpilogue(const Epilogue &e, int64_t channels, NDArray &out) {
  T *o = out.data<T>();
  const T *bias = e.bias ? e.bias->data<T>() : nullptr;
  for (int64_t i = 0; i < out.numel(); ++i) {
    T v = o[i] + (bias ? bias[i % channels] : T(0));
    o[i] = e.relu && v < T(0) ? T(0) : v;
  }
}

/// A bfloat16 convolution (all three arrays bfloat16) as float32 on widened
/// copies, rounded once: the products of a bf16 primitive with float32
/// accumulation. Returns false for other dtypes.
template <typename Run>
bool runWidened(const NDArray &a, const NDArray &b, NDArray &out, Run run) {
  if (a.dtype() != DType::BF16 || b.dtype() != DType::BF16 ||
      out.dtype() != DType::BF16)
    return false;
  NDArray wa = NDArray::empty(a.shape(), DType::F32);
  NDArray wb = NDArray::empty(b.shape(), DType::F32);
  NDArray wo = NDArray::empty(out.shape(), DType::F32);
  kernels::cast(a, wa);
  kernels::cast(b, wb);
  run(wa, wb, wo);
  kernels::cast(wo, out);
  return true;
}
} // namespace

void kernels::conv2d(const NDArray &input, const NDArray &filter,
                     const Conv2DParams &p, NDArray &out,
                     const Epilogue &epilogue) {
  if (!epilogue.bias && !epilogue.relu &&
      runWidened(input, filter, out,
                 [&](const NDArray &x, const NDArray &w, NDArray &o) {
                   conv2d(x, w, p, o);
                 }))
    return;
  checkDtypes("conv2d", input, filter, out);
  Geom g = makeGeom("conv2d", input.shape(), filter.shape(), out.shape(), p);
  if (epilogue.bias &&
      (epilogue.bias->rank() != 1 || epilogue.bias->dim(0) != g.o ||
       epilogue.bias->dtype() != out.dtype()))
    throw KernelError("conv2d: bias " + shapeToString(epilogue.bias->shape()) +
                      " does not match " + std::to_string(g.o) +
                      " output channels");
  if (out.numel() == 0)
    return;
  bool fused = epilogue.bias || epilogue.relu;
  if (input.numel() == 0 || filter.numel() == 0) {
    std::memset(out.rawData(), 0, out.bytes());
  } else if (input.dtype() == DType::F32) {
    runDnnl(g, Pass::Forward, input.rawData(), filter.rawData(), out.rawData(),
            epilogue);
    if (epilogue.relu)
      reluInPlace(out.data<float>(), out.numel());
    return;
  } else {
    convForward(g, input.data<double>(), filter.data<double>(),
                out.data<double>());
  }
  if (fused && out.dtype() == DType::F32)
    applyEpilogue<float>(epilogue, g.o, out);
  else if (fused)
    applyEpilogue<double>(epilogue, g.o, out);
}

void kernels::conv2dBackpropInput(const NDArray &gradOut, const NDArray &filter,
                                  const Conv2DParams &p, NDArray &gradInput) {
  if (runWidened(gradOut, filter, gradInput,
                 [&](const NDArray &g, const NDArray &w, NDArray &o) {
                   conv2dBackpropInput(g, w, p, o);
                 }))
    return;
  checkDtypes("conv2dBackpropInput", gradOut, filter, gradInput);
  Geom g = makeGeom("conv2dBackpropInput", gradInput.shape(), filter.shape(),
                    gradOut.shape(), p);
  if (gradInput.numel() == 0)
    return;
  if (gradOut.numel() == 0 || filter.numel() == 0) {
    std::memset(gradInput.rawData(), 0, gradInput.bytes());
    return;
  }
  if (gradOut.dtype() == DType::F32)
    runDnnl(g, Pass::BackwardData, gradInput.rawData(), filter.rawData(),
            gradOut.rawData());
  else
    convBackwardData(g, gradOut.data<double>(), filter.data<double>(),
                     gradInput.data<double>());
}

void kernels::conv2dBackpropFilter(const NDArray &input, const NDArray &gradOut,
                                   const Conv2DParams &p, NDArray &gradFilter) {
  if (runWidened(input, gradOut, gradFilter,
                 [&](const NDArray &x, const NDArray &g, NDArray &o) {
                   conv2dBackpropFilter(x, g, p, o);
                 }))
    return;
  checkDtypes("conv2dBackpropFilter", input, gradOut, gradFilter);
  Geom g = makeGeom("conv2dBackpropFilter", input.shape(), gradFilter.shape(),
                    gradOut.shape(), p);
  if (gradFilter.numel() == 0)
    return;
  if (input.numel() == 0 || gradOut.numel() == 0) {
    std::memset(gradFilter.rawData(), 0, gradFilter.bytes());
    return;
  }
  if (input.dtype() == DType::F32)
    runDnnl(g, Pass::BackwardWeights, input.rawData(), gradFilter.rawData(),
            gradOut.rawData());
  else
    convBackwardFilter(g, input.data<double>(), gradOut.data<double>(),
                       gradFilter.data<double>());
}
