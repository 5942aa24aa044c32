//===- InterpreterNNTest.cpp - convolution and pooling ops ----------------===//
//
// conv2d, its two backprops and the four pooling ops against direct loops.
// The references enumerate every (output, window tap) pair the forward op
// reads with TF's SAME padding rule; gradients accumulate over the same
// pairs, so one enumeration defines forward and backward.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/interpreter/InterpreterTestUtil.h"

#include <algorithm>
#include <limits>

using namespace kcc;
using namespace kcc::testing;

namespace {

/// One spatial dimension of a window op: output size and padding before.
struct Axis {
  int64_t in, window, stride, dilation, out, padBefore;
  Axis(int64_t in, int64_t window, int64_t stride, int64_t dilation, bool same)
      : in(in), window(window), stride(stride), dilation(dilation) {
    int64_t span = (window - 1) * dilation + 1;
    out = same ? (in + stride - 1) / stride : (in - span) / stride + 1;
    int64_t total =
        same ? std::max<int64_t>((out - 1) * stride + span - in, 0) : 0;
    padBefore = total / 2; // TF: the odd row goes after.
  }
};

/// Calls fn(oh, ow, ih, iw, kh, kw) for every window tap that lands inside
/// the input.
template <typename Fn> void forEachTap(const Axis &h, const Axis &w, Fn fn) {
  for (int64_t oh = 0; oh < h.out; ++oh)
    for (int64_t ow = 0; ow < w.out; ++ow)
      for (int64_t kh = 0; kh < h.window; ++kh)
        for (int64_t kw = 0; kw < w.window; ++kw) {
          int64_t ih = oh * h.stride + kh * h.dilation - h.padBefore;
          int64_t iw = ow * w.stride + kw * w.dilation - w.padBefore;
          if (ih >= 0 && ih < h.in && iw >= 0 && iw < w.in)
            fn(oh, ow, ih, iw, kh, kw);
        }
}

/// NHWC input x, HWIO filter; returns y, and given dy, dx and dw.
struct NaiveConv {
  int64_t n, c, f;
  Axis h, w;
  int64_t xi(int64_t b, int64_t i, int64_t j, int64_t ch) const {
    return ((b * h.in + i) * w.in + j) * c + ch;
  }
  int64_t yi(int64_t b, int64_t i, int64_t j, int64_t fo) const {
    return ((b * h.out + i) * w.out + j) * f + fo;
  }
  int64_t wi(int64_t kh, int64_t kw, int64_t ch, int64_t fo) const {
    return ((kh * w.window + kw) * c + ch) * f + fo;
  }
  /// Calls fn(xIndex, wIndex, yIndex) for every multiply-add of the forward.
  template <typename Fn> void forEachTerm(Fn fn) const {
    for (int64_t b = 0; b < n; ++b)
      forEachTap(h, w,
                 [&](int64_t oh, int64_t ow, int64_t ih, int64_t iw, int64_t kh,
                     int64_t kw) {
                   for (int64_t ch = 0; ch < c; ++ch)
                     for (int64_t fo = 0; fo < f; ++fo)
                       fn(xi(b, ih, iw, ch), wi(kh, kw, ch, fo),
                          yi(b, oh, ow, fo));
                 });
  }
  std::vector<double> forward(const std::vector<double> &x,
                              const std::vector<double> &wt) const {
    std::vector<double> y(n * h.out * w.out * f, 0.0);
    forEachTerm([&](int64_t a, int64_t b, int64_t o) { y[o] += x[a] * wt[b]; });
    return y;
  }
  std::vector<double> gradInput(const std::vector<double> &dy,
                                const std::vector<double> &wt) const {
    std::vector<double> dx(n * h.in * w.in * c, 0.0);
    forEachTerm(
        [&](int64_t a, int64_t b, int64_t o) { dx[a] += dy[o] * wt[b]; });
    return dx;
  }
  std::vector<double> gradFilter(const std::vector<double> &x,
                                 const std::vector<double> &dy) const {
    std::vector<double> dw(h.window * w.window * c * f, 0.0);
    forEachTerm(
        [&](int64_t a, int64_t b, int64_t o) { dw[b] += x[a] * dy[o]; });
    return dw;
  }
};

/// NHWC pooling over `c` channels; padded taps are skipped.
struct NaivePool {
  int64_t n, c;
  Axis h, w;
  int64_t xi(int64_t b, int64_t i, int64_t j, int64_t ch) const {
    return ((b * h.in + i) * w.in + j) * c + ch;
  }
  int64_t yi(int64_t b, int64_t i, int64_t j, int64_t ch) const {
    return ((b * h.out + i) * w.out + j) * c + ch;
  }
  /// Calls fn(outIndex, inputIndices of the window in scan order).
  template <typename Fn> void forEachWindow(Fn fn) const {
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch) {
        std::vector<std::vector<int64_t>> windows(h.out * w.out);
        forEachTap(h, w,
                   [&](int64_t oh, int64_t ow, int64_t ih, int64_t iw, int64_t,
                       int64_t) {
                     windows[oh * w.out + ow].push_back(xi(b, ih, iw, ch));
                   });
        for (int64_t oh = 0; oh < h.out; ++oh)
          for (int64_t ow = 0; ow < w.out; ++ow)
            fn(yi(b, oh, ow, ch), windows[oh * w.out + ow]);
      }
  }
  /// The first maximum of each window (what max_pool2d_grad routes to).
  int64_t argmax(const std::vector<double> &x,
                 const std::vector<int64_t> &window) const {
    int64_t best = window[0];
    for (int64_t i : window)
      if (x[i] > x[best])
        best = i;
    return best;
  }
};

class InterpreterNNTest : public InterpreterFixture,
                          public ::testing::WithParamInterface<DType> {
protected:
  DType dtype() const { return GetParam(); }
  std::string type() const { return dtypeName(GetParam()); }
  double tol() const { return toleranceFor(GetParam()); }
  NDArray array(const Shape &shape, const std::vector<double> &values) {
    return NDArray::fromVector(shape, values, dtype());
  }
};

TEST_P(InterpreterNNTest, Conv2dThenMaxPoolMatchesNaiveLoops) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<2x6x6x3x$T>, %w: tensor<3x3x3x4x$T>) -> tensor<2x3x3x4x$T> {
      %y = kc.conv2d %x, %w {padding = #kc<padding same>} : tensor<2x6x6x3x$T>, tensor<3x3x3x4x$T> -> tensor<2x6x6x4x$T>
      %p = kc.max_pool2d %y {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x6x6x4x$T> -> tensor<2x3x3x4x$T>
      return %p : tensor<2x3x3x4x$T>
    })mlir";
  auto x = randomValues(2 * 6 * 6 * 3, -1, 1, 51);
  auto w = randomValues(3 * 3 * 3 * 4, -1, 1, 52);
  NaiveConv conv{2, 3, 4, Axis(6, 3, 1, 1, true), Axis(6, 3, 1, 1, true)};
  std::vector<double> y = conv.forward(x, w);
  NaivePool pool{2, 4, Axis(6, 2, 2, 1, false), Axis(6, 2, 2, 1, false)};
  std::vector<double> expected(2 * 3 * 3 * 4);
  pool.forEachWindow([&](int64_t o, const std::vector<int64_t> &window) {
    expected[o] = y[pool.argmax(y, window)];
  });
  auto out = run(withType(text, type()),
                 {array({2, 6, 6, 3}, x), array({3, 3, 3, 4}, w)});
  ASSERT_EQ(out.size(), 1u);
  expectNear(out[0], {2, 3, 3, 4}, expected, tol());
}

TEST_P(InterpreterNNTest, StridedAndDilatedConvWithBackprops) {
  // Stride 2 with SAME padding (uneven: the extra row goes at the bottom) and
  // dilation 2 with VALID padding.
  const char *text = R"mlir(
    func.func @f(%x: tensor<2x7x7x2x$T>, %w: tensor<3x3x2x3x$T>,
                 %dy: tensor<2x4x4x3x$T>, %dyd: tensor<2x3x3x3x$T>)
        -> (tensor<2x4x4x3x$T>, tensor<2x7x7x2x$T>, tensor<3x3x2x3x$T>,
            tensor<2x3x3x3x$T>, tensor<2x7x7x2x$T>, tensor<3x3x2x3x$T>) {
      %y = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x7x7x2x$T>, tensor<3x3x2x3x$T> -> tensor<2x4x4x3x$T>
      %dx = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x4x4x3x$T>, tensor<3x3x2x3x$T> -> tensor<2x7x7x2x$T>
      %dw = kc.conv2d_backprop_filter %x, %dy {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x7x7x2x$T>, tensor<2x4x4x3x$T> -> tensor<3x3x2x3x$T>
      %yd = kc.conv2d %x, %w {dilations = array<i64: 2, 2>} : tensor<2x7x7x2x$T>, tensor<3x3x2x3x$T> -> tensor<2x3x3x3x$T>
      %dxd = kc.conv2d_backprop_input %dyd, %w {dilations = array<i64: 2, 2>} : tensor<2x3x3x3x$T>, tensor<3x3x2x3x$T> -> tensor<2x7x7x2x$T>
      %dwd = kc.conv2d_backprop_filter %x, %dyd {dilations = array<i64: 2, 2>} : tensor<2x7x7x2x$T>, tensor<2x3x3x3x$T> -> tensor<3x3x2x3x$T>
      return %y, %dx, %dw, %yd, %dxd, %dwd : tensor<2x4x4x3x$T>, tensor<2x7x7x2x$T>, tensor<3x3x2x3x$T>, tensor<2x3x3x3x$T>, tensor<2x7x7x2x$T>, tensor<3x3x2x3x$T>
    })mlir";
  auto x = randomValues(2 * 7 * 7 * 2, -1, 1, 61);
  auto w = randomValues(3 * 3 * 2 * 3, -1, 1, 62);
  auto dy = randomValues(2 * 4 * 4 * 3, -1, 1, 63);
  auto dyd = randomValues(2 * 3 * 3 * 3, -1, 1, 64);
  NaiveConv strided{2, 2, 3, Axis(7, 3, 2, 1, true), Axis(7, 3, 2, 1, true)};
  NaiveConv dilated{2, 2, 3, Axis(7, 3, 1, 2, false), Axis(7, 3, 1, 2, false)};
  ASSERT_EQ(strided.h.out, 4);
  ASSERT_EQ(dilated.h.out, 3);
  auto out = run(withType(text, type()),
                 {array({2, 7, 7, 2}, x), array({3, 3, 2, 3}, w),
                  array({2, 4, 4, 3}, dy), array({2, 3, 3, 3}, dyd)});
  ASSERT_EQ(out.size(), 6u);
  expectNear(out[0], {2, 4, 4, 3}, strided.forward(x, w), tol(), "conv2d");
  expectNear(out[1], {2, 7, 7, 2}, strided.gradInput(dy, w), tol(),
             "conv2d_backprop_input");
  expectNear(out[2], {3, 3, 2, 3}, strided.gradFilter(x, dy), tol(),
             "conv2d_backprop_filter");
  expectNear(out[3], {2, 3, 3, 3}, dilated.forward(x, w), tol(),
             "dilated conv2d");
  expectNear(out[4], {2, 7, 7, 2}, dilated.gradInput(dyd, w), tol(),
             "dilated conv2d_backprop_input");
  expectNear(out[5], {3, 3, 2, 3}, dilated.gradFilter(x, dyd), tol(),
             "dilated conv2d_backprop_filter");
}

TEST_P(InterpreterNNTest, PoolingWithSamePaddingAndGradients) {
  // 3x3 windows, stride 2, SAME on 5x5: one padded row/col on each side, so
  // border windows hold 4 or 6 real elements.
  const char *text = R"mlir(
    func.func @f(%x: tensor<2x5x5x2x$T>, %dy: tensor<2x3x3x2x$T>)
        -> (tensor<2x3x3x2x$T>, tensor<2x3x3x2x$T>, tensor<2x5x5x2x$T>, tensor<2x5x5x2x$T>) {
      %mp = kc.max_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x5x5x2x$T> -> tensor<2x3x3x2x$T>
      %ap = kc.avg_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x5x5x2x$T> -> tensor<2x3x3x2x$T>
      %mg = kc.max_pool2d_grad %x, %dy {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x5x5x2x$T>, tensor<2x3x3x2x$T> -> tensor<2x5x5x2x$T>
      %ag = kc.avg_pool2d_grad %dy {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x3x3x2x$T> -> tensor<2x5x5x2x$T>
      return %mp, %ap, %mg, %ag : tensor<2x3x3x2x$T>, tensor<2x3x3x2x$T>, tensor<2x5x5x2x$T>, tensor<2x5x5x2x$T>
    })mlir";
  // Negative values: a max over zero padding would be wrong here.
  auto x = randomValues(2 * 5 * 5 * 2, -2, -1, 71);
  auto dy = randomValues(2 * 3 * 3 * 2, -1, 1, 72);
  NaivePool pool{2, 2, Axis(5, 3, 2, 1, true), Axis(5, 3, 2, 1, true)};
  ASSERT_EQ(pool.h.padBefore, 1);
  std::vector<double> mp(36), ap(36), mg(100, 0.0), ag(100, 0.0);
  pool.forEachWindow([&](int64_t o, const std::vector<int64_t> &window) {
    int64_t best = pool.argmax(x, window);
    mp[o] = x[best];
    mg[best] += dy[o];
    double sum = 0;
    for (int64_t i : window) {
      sum += x[i];
      ag[i] += dy[o] / window.size();
    }
    ap[o] = sum / window.size();
  });
  auto out = run(withType(text, type()),
                 {array({2, 5, 5, 2}, x), array({2, 3, 3, 2}, dy)});
  ASSERT_EQ(out.size(), 4u);
  expectNear(out[0], {2, 3, 3, 2}, mp, tol(), "max_pool2d");
  expectNear(out[1], {2, 3, 3, 2}, ap, tol(), "avg_pool2d");
  expectNear(out[2], {2, 5, 5, 2}, mg, tol(), "max_pool2d_grad");
  expectNear(out[3], {2, 5, 5, 2}, ag, tol(), "avg_pool2d_grad");
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, InterpreterNNTest,
                         ::testing::Values(DType::F32, DType::F64),
                         [](const ::testing::TestParamInfo<DType> &info) {
                           return std::string(dtypeName(info.param));
                         });

} // namespace
