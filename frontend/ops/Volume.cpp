//===- Volume.cpp - 3-D convolution and pooling from the 2-D ops ----------===//
//
// kc has no 3-D op: a volume [B, D, H, W, C] is a batch of B*D images, and
// the depth axis is handled by slicing it. A convolution gathers its KD depth
// taps (strided slices of the depth-padded input) as the channels of one
// image [B*Do, H, W, KD*C] and runs one conv2d with the filter's depth folded
// into its input channels, the work of the 3-D convolution in one oneDNN
// call. Pooling pools every depth slice in 2-D and then reduces the depth
// taps elementwise; max and average pooling are separable, and so is
// Keras's count of the valid elements of a window. A transposed
// convolution runs every depth tap as one conv2dTranspose and places each
// tap's slices at their depths before summing them. Each piece (pad by
// concat, slice, reshape, transpose, conv2d, the pools, maximum) already
// has its gradient, the interpreter's kernel and the compiler's lowering.
//
//===----------------------------------------------------------------------===//

#include "frontend/ops/OpSupport.h"

#include <limits>

using namespace kcc;
using namespace kcc::ops;
using detail::fail;

namespace {

void expectVolume(llvm::StringRef op, const Tensor &x) {
  if (x.rank() != 5)
    fail(op, "expects an NDHWC input of rank 5, got " + x.shapeString());
}

void expectTriple(llvm::StringRef op, llvm::StringRef what,
                  const std::vector<int64_t> &v) {
  if (v.size() != 3 || v[0] <= 0 || v[1] <= 0 || v[2] <= 0)
    fail(op, "expects 3 positive " + what.str() + " ({d, h, w}), got " +
                 shapes::str(v));
}

/// The depth axis of a window: the padding before and after the input and
/// the output length, as the 2-D kernels place them (Same: the extra
/// element after).
struct DepthWindow {
  int64_t before, after, out;
};

DepthWindow depthWindow(llvm::StringRef op, int64_t in, int64_t window,
                        int64_t stride, int64_t dilation, Padding padding) {
  int64_t span = (window - 1) * dilation + 1;
  if (padding == Padding::Valid && in < span)
    fail(op, "the window spans " + std::to_string(span) +
                 " depth steps, the input has " + std::to_string(in));
  int64_t out =
      kernels::windowOutputSize(in, window, stride, dilation, padding);
  int64_t before =
      kernels::windowPadBefore(in, window, stride, dilation, padding);
  int64_t after = std::max<int64_t>((out - 1) * stride + span - in - before, 0);
  return {before, after, out};
}

/// `x` with `before` and `after` slices of `value` around its depth axis.
Tensor padDepth(const Tensor &x, int64_t before, int64_t after, double value) {
  std::vector<Tensor> parts;
  auto fill = [&](int64_t n) {
    Shape s = x.shape();
    s[1] = n;
    return fillLike(x, s, value);
  };
  if (before)
    parts.push_back(fill(before));
  parts.push_back(x);
  if (after)
    parts.push_back(fill(after));
  return parts.size() == 1 ? x : concat(parts, 1);
}

/// Tap `t` of every output position along depth:
/// x[:, t*dilation : t*dilation + (out-1)*stride + 1 : stride].
Tensor depthTap(const Tensor &x, int64_t t, int64_t dilation, int64_t stride,
                int64_t out) {
  std::vector<int64_t> start(x.rank(), 0), strides(x.rank(), 1);
  std::vector<int64_t> limit(x.shape().begin(), x.shape().end());
  start[1] = t * dilation;
  limit[1] = start[1] + (out - 1) * stride + 1;
  strides[1] = stride;
  return slice(x, start, limit, strides);
}

Tensor pool3d(llvm::StringRef op, const Tensor &x,
              const std::vector<int64_t> &window,
              const std::vector<int64_t> &strides, Padding padding,
              bool isMax) {
  expectVolume(op, x);
  expectTriple(op, "window sizes", window);
  expectTriple(op, "strides", strides);
  int64_t b = x.dim(0), d = x.dim(1), c = x.dim(4);
  Tensor planes = reshape(x, {b * d, x.dim(2), x.dim(3), c});
  std::vector<int64_t> window2{window[1], window[2]};
  std::vector<int64_t> strides2{strides[1], strides[2]};
  Tensor pooled = isMax ? maxPool2d(planes, window2, strides2, padding)
                        : avgPool2d(planes, window2, strides2, padding);
  Tensor y = reshape(pooled, {b, d, pooled.dim(1), pooled.dim(2), c});
  DepthWindow w = depthWindow(op, d, window[0], strides[0], 1, padding);
  // Max: padding never wins against a real element (every window holds
  // one). Average: zeros, left out of the count below.
  y = padDepth(y, w.before, w.after,
               isMax ? static_cast<double>(std::numeric_limits<float>::lowest())
                     : 0.0);
  Tensor acc = depthTap(y, 0, 1, strides[0], w.out);
  for (int64_t t = 1; t < window[0]; ++t) {
    Tensor tap = depthTap(y, t, 1, strides[0], w.out);
    acc = isMax ? maximum(acc, tap) : add(acc, tap);
  }
  if (isMax)
    return acc;
  // The valid depth taps of each output position.
  std::vector<int64_t> counts;
  for (int64_t o = 0; o < w.out; ++o) {
    int64_t first = o * strides[0] - w.before, n = 0;
    for (int64_t t = 0; t < window[0]; ++t)
      n += first + t >= 0 && first + t < d;
    counts.push_back(n);
  }
  if (llvm::all_equal(counts))
    return div(acc, fillLike(acc, {}, static_cast<double>(counts[0])));
  std::vector<Tensor> divisors;
  for (int64_t n : counts)
    divisors.push_back(fillLike(acc, {1, 1, 1, 1, 1}, static_cast<double>(n)));
  return div(acc, concat(divisors, 1));
}

} // namespace

Tensor ops::conv3d(const Tensor &x, const Tensor &filter,
                   const std::vector<int64_t> &strides, Padding padding,
                   const std::vector<int64_t> &dilations) {
  expectVolume("conv3d", x);
  expectTriple("conv3d", "strides", strides);
  expectTriple("conv3d", "dilations", dilations);
  if (filter.rank() != 5 || filter.dim(3) != x.dim(4))
    fail("conv3d", "expects a DHWIO filter with " + std::to_string(x.dim(4)) +
                       " input channels, got " + filter.shapeString());
  int64_t b = x.dim(0), h = x.dim(2), w = x.dim(3), c = x.dim(4);
  int64_t kd = filter.dim(0), kh = filter.dim(1), kw = filter.dim(2),
          f = filter.dim(4);
  DepthWindow dw =
      depthWindow("conv3d", x.dim(1), kd, strides[0], dilations[0], padding);
  Tensor padded = padDepth(x, dw.before, dw.after, 0.0);
  // Channel t*C + c of the stacked image is channel c of depth tap t, as
  // the folded filter's input channel t*C + c.
  std::vector<Tensor> taps;
  for (int64_t t = 0; t < kd; ++t)
    taps.push_back(
        reshape(depthTap(padded, t, dilations[0], strides[0], dw.out),
                {b * dw.out, h, w, c}));
  Tensor stacked = kd == 1 ? taps[0] : concat(taps, 3);
  Tensor folded =
      reshape(transpose(filter, {1, 2, 0, 3, 4}), {kh, kw, kd * c, f});
  Tensor y = conv2d(stacked, folded, {strides[1], strides[2]}, padding,
                    {dilations[1], dilations[2]});
  return reshape(y, {b, dw.out, y.dim(1), y.dim(2), f});
}

Tensor ops::conv3dTranspose(const Tensor &x, const Tensor &filter,
                            const std::vector<int64_t> &strides,
                            Padding padding,
                            const std::vector<int64_t> &dilations) {
  expectVolume("conv3d_transpose", x);
  expectTriple("conv3d_transpose", "strides", strides);
  expectTriple("conv3d_transpose", "dilations", dilations);
  if (filter.rank() != 5 || filter.dim(4) != x.dim(4))
    fail("conv3d_transpose", "expects a [KD, KH, KW, out, in] filter with " +
                                 std::to_string(x.dim(4)) +
                                 " input channels, got " +
                                 filter.shapeString());
  int64_t b = x.dim(0), d = x.dim(1), c = x.dim(4);
  int64_t kd = filter.dim(0), f = filter.dim(3);
  int64_t s = strides[0], dil = dilations[0], span = (kd - 1) * dil + 1;
  // Keras's output length (output_padding None) and the first of the full
  // transposed convolution's positions it keeps (as conv2dTranspose does
  // along height and width).
  int64_t out =
      padding == Padding::Same ? d * s : d * s + std::max<int64_t>(span - s, 0);
  int64_t first =
      padding == Padding::Same ? std::max<int64_t>(span - s, 0) / 2 : 0;
  // Every depth tap of every input slice in one 2-D transposed convolution
  // (output channel t*F + f: tap t, filter f), then each tap is placed at
  // depth i*s + t*dil and the taps summed.
  Tensor folded = reshape(transpose(filter, {1, 2, 0, 3, 4}),
                          {filter.dim(1), filter.dim(2), kd * f, c});
  Tensor planes = conv2dTranspose(reshape(x, {b * d, x.dim(2), x.dim(3), c}),
                                  folded, {strides[1], strides[2]}, padding,
                                  {dilations[1], dilations[2]});
  int64_t ho = planes.dim(1), wo = planes.dim(2);
  Tensor taps = reshape(planes, {b, d, ho, wo, kd, f});
  int64_t strided = (d - 1) * s + 1;
  if (s > 1) {
    // Slice i at depth i*s: s-1 zero slices after each, the last ones cut.
    Tensor spread = reshape(taps, {b, d, 1, ho, wo, kd, f});
    spread =
        concat({spread, fillLike(spread, {b, d, s - 1, ho, wo, kd, f}, 0)}, 2);
    taps = slice(reshape(spread, {b, d * s, ho, wo, kd, f}), {0, 0, 0, 0, 0, 0},
                 {b, strided, ho, wo, kd, f}, {1, 1, 1, 1, 1, 1});
  }
  int64_t full = strided + span - 1;
  Tensor sum;
  for (int64_t t = 0; t < kd; ++t) {
    Tensor tap =
        reshape(slice(taps, {0, 0, 0, 0, t, 0}, {b, strided, ho, wo, t + 1, f},
                      {1, 1, 1, 1, 1, 1}),
                {b, strided, ho, wo, f});
    tap = padDepth(tap, t * dil, full - strided - t * dil, 0.0);
    sum = sum.defined() ? add(sum, tap) : tap;
  }
  if (first + out > full)
    sum = padDepth(sum, 0, first + out - full, 0.0);
  if (first == 0 && out == sum.dim(1))
    return sum;
  return slice(sum, {0, first, 0, 0, 0}, {b, first + out, ho, wo, f},
               {1, 1, 1, 1, 1});
}

Tensor ops::maxPool3d(const Tensor &x, const std::vector<int64_t> &window,
                      const std::vector<int64_t> &strides, Padding padding) {
  return pool3d("max_pool3d", x, window, strides, padding, /*isMax=*/true);
}

Tensor ops::avgPool3d(const Tensor &x, const std::vector<int64_t> &window,
                      const std::vector<int64_t> &strides, Padding padding) {
  return pool3d("avg_pool3d", x, window, strides, padding, /*isMax=*/false);
}
