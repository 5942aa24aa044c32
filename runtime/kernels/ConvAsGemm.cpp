//===- ConvAsGemm.cpp - Convolutions as im2col and GEMMs ------------------===//
//
// The three passes of a float32 convolution as kcc's GEMMs on the NHWC
// input and HWIO filter as they lie. Conv.cpp takes this path where it
// beats oneDNN's direct convolutions (1x1 ones, filters that outweigh their
// column matrix) and where oneDNN has no direct convolution for a pass and
// would run its own im2col + GEMM: on grouped convolutions with a few
// channels a group, oneDNN 2.6's runs a tiny GEMM per image and group (1 ms
// for a 4-group 3x3 convolution of 32 10x10x8 images, 0.5 GFLOP/s).
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/ConvGeometry.h"
#include "runtime/kernels/KernelSupport.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

using Geom = ConvGeometry;

bool isPointwise(const Geom &g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.padT == 0 &&
         g.padL == 0 && g.padB == 0 && g.padR == 0;
}

/// Scratch per thread and role (0: the column matrix, 1: a grouped
/// convolution's dense filter), grown as needed.
float *scratch(int role, int64_t elements) {
  thread_local std::vector<float> buffers[2];
  std::vector<float> &b = buffers[role];
  if (int64_t(b.size()) < elements)
    b.resize(elements);
  return b.data();
}

/// Copies n floats. A few channels at a time (grouped convolutions have 2 to
/// 16) as inline vector moves: a libc memcpy call per pixel and tap was 10%
/// of conv_windows's step.
inline void copyFloats(float *dst, const float *src, int64_t n) {
  if (n >= 64)
    return (void)std::memcpy(dst, src, sizeof(float) * n);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    std::memcpy(dst + i, src + i, 8 * sizeof(float));
  if (n - i >= 4) {
    std::memcpy(dst + i, src + i, 4 * sizeof(float));
    i += 4;
  }
  if (n - i >= 2) {
    std::memcpy(dst + i, src + i, 2 * sizeof(float));
    i += 2;
  }
  if (n - i >= 1)
    dst[i] = src[i];
}

/// col[(b, oy, ox)][(t - tap0) * C + ic] = x[b, iy, ix, ic], 0 in the padding.
void im2col(const Geom &g, const GemmLowering &l, const float *x, float *col) {
  int64_t k = l.taps * g.c, ky0 = l.tap0 / g.kw, kx0 = l.tap0 % g.kw;
  runTasks(g.n * g.oh, g.n * g.oh * g.ow * k, [&](int64_t t) {
    int64_t b = t / g.oh, oy = t % g.oh;
    const float *image = x + b * g.h * g.w * g.c;
    float *dst = col + (b * g.oh + oy) * g.ow * k;
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      int64_t ky = ky0, kx = kx0;
      for (int64_t j = 0; j < l.taps;) {
        int64_t iy = inputPos(oy, ky, g.sh, g.dh, g.padT, g.h);
        int64_t ix = inputPos(ox, kx, g.sw, g.dw, g.padL, g.w);
        int64_t run = 1;
        if (iy < 0 || ix < 0) {
          std::fill(dst, dst + g.c, 0.0f);
        } else {
          // Undilated, the next taps of the filter row read the next
          // pixels: one copy for those inside the image.
          if (g.dw == 1)
            while (j + run < l.taps && kx + run < g.kw && ix + run < g.w)
              ++run;
          copyFloats(dst, image + (iy * g.w + ix) * g.c, run * g.c);
        }
        j += run;
        dst += run * g.c;
        kx += run; // a run ends at the filter row's end at the latest
        if (kx == g.kw)
          kx = 0, ++ky;
      }
    }
  });
}

/// dx = the sum of dcol's entries over the windows that read each input
/// element (the adjoint of im2col). Tasks own whole images: no races.
void col2im(const Geom &g, const GemmLowering &l, const float *col, float *dx) {
  int64_t k = l.taps * g.c;
  runTasks(g.n, g.n * g.oh * g.ow * k, [&](int64_t b) {
    float *img = dx + b * g.h * g.w * g.c;
    std::fill(img, img + g.h * g.w * g.c, 0.0f);
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        const float *row = col + ((b * g.oh + oy) * g.ow + ox) * k;
        for (int64_t j = 0; j < l.taps; ++j) {
          int64_t ky = (l.tap0 + j) / g.kw, kx = (l.tap0 + j) % g.kw;
          int64_t iy = inputPos(oy, ky, g.sh, g.dh, g.padT, g.h);
          int64_t ix = inputPos(ox, kx, g.sw, g.dw, g.padL, g.w);
          if (iy < 0 || ix < 0)
            continue;
          float *__restrict dst = img + (iy * g.w + ix) * g.c;
          const float *__restrict src = row + j * g.c;
          for (int64_t ic = 0; ic < g.c; ++ic)
            dst[ic] += src[ic];
        }
      }
  });
}

/// The ungrouped passes: the filter's rows of the taps are one block of the
/// [KH*KW*C, O] matrix, the output the GEMM's own.
void runUngrouped(const Geom &g, const GemmLowering &l, ConvPass pass, float *x,
                  float *w, float *y, const float *bias) {
  int64_t rows = g.n * g.oh * g.ow, k = l.taps * g.c;
  float *slice = w + l.tap0 * g.c * g.o;
  switch (pass) {
  case ConvPass::Forward: { // y = col . w
    float *col = x;
    if (!l.pointwise)
      im2col(g, l, x, col = scratch(0, rows * k));
    return matmulF32(col, slice, bias, y, rows, g.o, k, false, false, false);
  }
  case ConvPass::BackwardData: { // dcol = dy . w^T, dx = col2im(dcol)
    if (l.pointwise)
      return matmulF32(y, slice, nullptr, x, rows, g.c, g.o, false, true,
                       false);
    float *dcol = scratch(0, rows * k);
    matmulF32(y, slice, nullptr, dcol, rows, k, g.o, false, true, false);
    return col2im(g, l, dcol, x);
  }
  case ConvPass::BackwardWeights: { // dw = col^T . dy, 0 for the idle taps
    if (!l.pointwise)
      std::memset(w, 0, sizeof(float) * g.kh * g.kw * g.c * g.o);
    float *col = x;
    if (!l.pointwise)
      im2col(g, l, x, col = scratch(0, rows * k));
    return matmulF32(col, y, nullptr, slice, k, g.o, rows, true, false, false);
  }
  }
}

/// A grouped convolution as the ungrouped one whose filter is block
/// diagonal: [KH, KW, C, O] with group i's [C/G, O/G] block at rows and
/// columns i, zeros elsewhere. G times the products, but one GEMM whose
/// N is all O channels, where a GEMM per group with a few columns runs
/// at a few GFLOP/s. The filter gradient is the dense one's diagonal blocks.
void runGrouped(const Geom &g, const GemmLowering &l, ConvPass pass, float *x,
                float *w, float *y, const float *bias) {
  Geom dense = g;
  dense.grp = 1;
  int64_t taps = g.kh * g.kw, gi = g.groupIn(), go = g.groupOut();
  float *full = scratch(1, taps * g.c * g.o);
  // w[t][ic][o] <-> full[t][group(o) * gi + ic][o]
  auto blocks = [&](bool expand) {
    if (expand)
      std::memset(full, 0, sizeof(float) * taps * g.c * g.o);
    for (int64_t t = 0; t < taps; ++t)
      for (int64_t ic = 0; ic < gi; ++ic)
        for (int64_t o = 0; o < g.o; ++o) {
          float &f = full[(t * g.c + o / go * gi + ic) * g.o + o];
          float &v = w[(t * gi + ic) * g.o + o];
          if (expand)
            f = v;
          else
            v = f;
        }
  };
  if (pass != ConvPass::BackwardWeights)
    blocks(true);
  runUngrouped(dense, l, pass, x, full, y, bias);
  if (pass == ConvPass::BackwardWeights)
    blocks(false);
}

} // namespace

std::optional<GemmLowering> detail::gemmLowering(const Geom &g) {
  if (isPointwise(g))
    return GemmLowering{true, 0, 1};
  // Taps that fall in the padding for every output position (the 3x3 taps
  // around a 1x1 image) contribute nothing: leave them out of the product.
  auto reads = [](int64_t k, int64_t out, int64_t stride, int64_t dil,
                  int64_t pad, int64_t size) {
    for (int64_t o = 0; o < out; ++o)
      if (inputPos(o, k, stride, dil, pad, size) >= 0)
        return true;
    return false;
  };
  int64_t first = -1, last = -1;
  for (int64_t ky = 0; ky < g.kh; ++ky)
    for (int64_t kx = 0; kx < g.kw; ++kx)
      if (reads(ky, g.oh, g.sh, g.dh, g.padT, g.h) &&
          reads(kx, g.ow, g.sw, g.dw, g.padL, g.w)) {
        int64_t t = ky * g.kw + kx;
        first = first < 0 ? t : first;
        last = t;
      }
  if (first < 0) // No window reaches the input (not a Keras geometry).
    return std::nullopt;
  return GemmLowering{false, first, last - first + 1};
}

bool detail::gemmLoweringWins(const Geom &g, const GemmLowering &l) {
  if (g.grp != 1)
    return false;
  // A strided 1x1 convolution's column matrix is a subsample of its input.
  // (And oneDNN 2.6's jit_1x1:avx2 backward-weights on a strided NHWC input
  // returns a wrong filter gradient with 2 threads: 2x8x8x3 input, 6
  // filters, stride 2, in KernelsTest.)
  if (g.kh == 1 && g.kw == 1)
    return true;
  // Each pass moves the column matrix twice (im2col writes it, the GEMM
  // reads it; dcol alike), where oneDNN moves the filter twice in its reorder
  // and runs a direct convolution as fast as the GEMM: the smaller wins.
  return g.n * g.oh * g.ow * l.taps * g.c <= g.kh * g.kw * g.c * g.o;
}

void detail::runConvAsGemm(const Geom &g, const GemmLowering &l, ConvPass pass,
                           float *x, float *w, float *y, const float *bias) {
  if (g.grp == 1)
    runUngrouped(g, l, pass, x, w, y, bias);
  else
    runGrouped(g, l, pass, x, w, y, bias);
}
