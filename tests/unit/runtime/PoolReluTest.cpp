//===- PoolReluTest.cpp - max pooling with relu on its maxima -------------===//
//
// kernels::maxPool2dRelu (kcc_rt_max_pool2d_relu_*) computes
// relu(max_pool2d(x)) in the pooling's pass. It must equal max pooling of
// relu(x) bit for bit, the order Keras's Conv2D(relu) + MaxPooling2D
// computes: windows with no positive value give 0, a window with a NaN
// gives NaN, on tiled, overlapping and same-padded windows.
//
//===----------------------------------------------------------------------===//

#include "runtime/LibraryCalls.h"
#include "runtime/kernels/Kernels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace kcc;
using namespace kcc::kernels;

namespace {

struct Case {
  int64_t h, w, window, stride;
  Padding pad;
};

/// Values in [-2, 1] in channels 1 and 2, negative in channel 0 (windows
/// with no positive value). Shapes have 3 channels.
NDArray values(const Shape &shape, DType dt) {
  NDArray a = NDArray::empty(shape, dt);
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = ((i * 7919) % 13) / 4.0 - 2.0;
    a.set(i, i % 3 == 0 ? -std::fabs(v) - 0.25 : v);
  }
  return a;
}

bool sameBits(const NDArray &a, const NDArray &b) {
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.at(i), y = b.at(i);
    if (std::isnan(x) ? !std::isnan(y)
                      : (x != y || std::signbit(x) != std::signbit(y)))
      return false;
  }
  return true;
}

TEST(MaxPoolRelu, EqualsMaxPoolOfRelu) {
  const Case cases[] = {{6, 6, 2, 2, Padding::Valid},
                        {7, 5, 2, 2, Padding::Valid},
                        {7, 7, 3, 2, Padding::Same},
                        {5, 5, 3, 1, Padding::Valid}};
  for (DType dt : {DType::F32, DType::F64})
    for (const Case &c : cases) {
      Shape xs{2, c.h, c.w, 3};
      NDArray x = values(xs, dt);
      x.set(((1 * c.h + 2) * c.w + 1) * 3 + 2, NAN);
      NDArray relu = x.clone();
      for (int64_t i = 0; i < relu.numel(); ++i)
        if (relu.at(i) < 0)
          relu.set(i, 0);
      Pool2DParams p{c.window, c.window, c.stride, c.stride, c.pad};
      int64_t oh = windowOutputSize(c.h, c.window, c.stride, 1, c.pad);
      int64_t ow = windowOutputSize(c.w, c.window, c.stride, 1, c.pad);
      Shape ys{2, oh, ow, 3};
      NDArray want = NDArray::empty(ys, dt), got = NDArray::empty(ys, dt);
      maxPool2d(relu, p, want);
      maxPool2dRelu(x, p, got);
      std::string what = shapeToString(xs) + " window " +
                         std::to_string(c.window) + " stride " +
                         std::to_string(c.stride);
      EXPECT_TRUE(sameBits(want, got)) << what;
      int64_t zeros = 0, nans = 0;
      for (int64_t i = 0; i < got.numel(); ++i) {
        zeros += got.at(i) == 0;
        nans += std::isnan(got.at(i));
      }
      EXPECT_GT(zeros, 0) << what;
      EXPECT_GT(nans, 0) << what;
    }
}

TEST(MaxPoolRelu, EntryPointRunsTheKernel) {
  NDArray x = values({1, 4, 4, 2}, DType::F32);
  NDArray want = NDArray::empty({1, 2, 2, 2}, DType::F32);
  NDArray got = NDArray::empty({1, 2, 2, 2}, DType::F32);
  maxPool2dRelu(x, Pool2DParams{2, 2, 2, 2, Padding::Valid}, want);
  kcc_rt_max_pool2d_relu_f32(x.data<float>(), got.data<float>(), 1, 4, 4, 2, 1,
                             2, 2, 2, 2, 2, 2, 2, 0);
  EXPECT_EQ(std::memcmp(want.rawData(), got.rawData(), want.bytes()), 0);
}

} // namespace
