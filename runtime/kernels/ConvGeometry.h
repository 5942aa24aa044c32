//===- ConvGeometry.h - One 2D convolution's sizes and windows --*- C++ -*-===//
//
// Internal to runtime/kernels: the geometry Conv.cpp validates against the
// arrays' shapes, the window arithmetic of its loops, and the lowering of
// a convolution to GEMMs on the arrays as they lie (ConvAsGemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_CONVGEOMETRY_H
#define KCC_RUNTIME_KERNELS_CONVGEOMETRY_H

#include <array>
#include <cstdint>
#include <optional>

namespace kcc {
namespace kernels {
namespace detail {

/// Convolution geometry, validated against the array shapes.
struct ConvGeometry {
  int64_t n, h, w, c; // input NHWC
  int64_t kh, kw, o;  // filter HWIO (I == c / grp)
  int64_t oh, ow;     // output NHWC (channels o)
  int64_t sh, sw, dh, dw;
  int64_t padT, padL, padB, padR;
  int64_t grp = 1;

  int64_t groupIn() const { return c / grp; }
  int64_t groupOut() const { return o / grp; }

  std::array<int64_t, 18> key() const {
    return {n,  h,  w,  c,  kh,   kw,   o,    oh,   ow,
            sh, sw, dh, dw, padT, padL, padB, padR, grp};
  }
};

/// The input row/col read by output position `out` and filter tap `k`, or -1
/// when it falls in the padding.
inline int64_t inputPos(int64_t out, int64_t k, int64_t stride, int64_t dil,
                        int64_t pad, int64_t size) {
  int64_t i = out * stride - pad + k * dil;
  return i >= 0 && i < size ? i : -1;
}

/// The output row/col that reads input position `in` through tap `k`, or -1.
inline int64_t outputPos(int64_t in, int64_t k, int64_t stride, int64_t dil,
                         int64_t pad, int64_t size) {
  int64_t t = in + pad - k * dil;
  if (t < 0 || t % stride)
    return -1;
  return t / stride < size ? t / stride : -1;
}

/// One pass of a convolution; its three tensors are named in forward terms
/// (for the backprops the written one is a gradient).
enum class ConvPass { Forward, BackwardData, BackwardWeights };

/// A convolution as GEMMs on the arrays as they lie: the NHWC input's
/// windows as rows of a column matrix [N*OH*OW, taps*C] (im2col) and the
/// HWIO filter as a [KH*KW*C, O] matrix (block diagonal when grouped), of
/// which a run of taps is a contiguous block of rows. A pointwise
/// convolution (1x1, unit strides, no padding) is a GEMM on the input
/// itself.
struct GemmLowering {
  bool pointwise; ///< the input is the column matrix
  int64_t tap0;   ///< first tap (ky * KW + kx) that ever reads the input
  int64_t taps;   ///< taps from tap0 on, through the last one that does
};

/// The lowering of any geometry some window of which reads the input.
/// Grouped ones run as one GEMM on a block-diagonal filter: G times the
/// products of the convolution.
std::optional<GemmLowering> gemmLowering(const ConvGeometry &g);

/// Groups up to which the lowering replaces oneDNN's own im2col + GEMM (its
/// block-diagonal filter multiplies the products by the group count).
constexpr int64_t kMaxLoweredGroups = 8;

/// Whether the lowering beats oneDNN's direct convolutions on `g` whatever
/// they pick: ungrouped, and 1x1 or with a filter that outweighs its column
/// matrix (oneDNN would reorder the filter each call, which costs as much
/// as the product).
bool gemmLoweringWins(const ConvGeometry &g, const GemmLowering &l);

/// Runs one pass of `g` lowered to GEMMs (f32); `bias`, forward only, may
/// be null.
/// be null. x, w, y: the input, filter and output in forward terms, the pass
/// writing the one it computes (dx, dw or y).
void runConvAsGemm(const ConvGeometry &g, const GemmLowering &l, ConvPass pass,
                   float *x, float *w, float *y, const float *bias);

} // namespace detail
} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_CONVGEOMETRY_H
