//===- AdaptivePoolingTest.cpp - Adaptive average and max pooling, eager --===//
//
// Hand-computed windows of Keras's adaptive pooling: output i of n over a
// length L covers [floor(i L / n), ceil((i + 1) L / n)), so windows
// overlap where n does not divide L and repeat where n exceeds it. Keras
// 3.15's JAX backend returns NaN for some of these sizes (13 of 26, 7 of
// 6); the Keras fixture (adaptive.keras) covers the sizes it pools right.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

using namespace kcc;
using kcc::testing::errorOf;

namespace {

std::vector<double> pool1d(bool isMax, int64_t n,
                           const std::vector<double> &steps) {
  int64_t length = static_cast<int64_t>(steps.size());
  NDArray x = NDArray::fromVector({1, length, 1}, steps);
  return AdaptivePooling(isMax, {n})(Tensor(x)).array().toVector();
}

TEST(AdaptivePooling, OverlappingWindowsOfTwoSizes) {
  // 5 -> 3: [0, 2), [1, 4), [3, 5).
  std::vector<double> x = {1, 2, 3, 4, 10};
  EXPECT_EQ(pool1d(false, 3, x), (std::vector<double>{1.5, 3, 7}));
  EXPECT_EQ(pool1d(true, 3, x), (std::vector<double>{2, 4, 10}));
}

TEST(AdaptivePooling, MorePositionsThanStepsRepeatThem) {
  // 3 -> 4: [0, 1), [0, 2), [1, 3), [2, 3).
  std::vector<double> x = {2, 4, 8};
  EXPECT_EQ(pool1d(false, 4, x), (std::vector<double>{2, 3, 6, 8}));
  // 6 -> 7, where Keras's JAX backend gives NaN: [0, 1), [0, 2), [1, 3),
  // [2, 4), [3, 5), [4, 6), [5, 6).
  std::vector<double> y = {1, 3, 5, 7, 9, 11};
  EXPECT_EQ(pool1d(false, 7, y), (std::vector<double>{1, 2, 4, 6, 8, 10, 11}));
}

TEST(AdaptivePooling, DividingSizesPoolDisjointWindows) {
  std::vector<double> x = {1, 3, 5, 7, 9, 11};
  EXPECT_EQ(pool1d(false, 3, x), (std::vector<double>{2, 6, 10}));
  EXPECT_EQ(pool1d(true, 6, x), x);
}

TEST(AdaptivePooling, TwoAxesAndChannelsFirst) {
  // [1, 2, 3, 1] (channels_last) -> 1 x 2: rows pooled, then [0, 2), [1, 3).
  NDArray x = NDArray::fromVector({1, 2, 3, 1}, {1, 2, 3, 5, 6, 7});
  Tensor y = AdaptivePooling(false, {1, 2})(Tensor(x));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 1}));
  EXPECT_EQ(y.array().toVector(), (std::vector<double>{3.5, 4.5}));
  // The same values as channels_first [1, 1, 2, 3].
  Tensor z = AdaptivePooling(true, {1, 2}, "channels_first")(
      Tensor(x.reshaped({1, 1, 2, 3})));
  EXPECT_EQ(z.shape(), (Shape{1, 1, 1, 2}));
  EXPECT_EQ(z.array().toVector(), (std::vector<double>{6, 7}));
}

TEST(AdaptivePooling, BadSizesAndRanksAreErrors) {
  EXPECT_NE(errorOf([] {
              AdaptivePooling(false, {0});
            }).find("output_size 0 must be in [1, 4096]"),
            std::string::npos);
  EXPECT_NE(errorOf([] { AdaptivePooling(true, {2, 2}, "nhwc"); })
                .find("data_format 'nhwc' is not channels_last or "
                      "channels_first"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              AdaptivePooling(false, {2, 2})(
                  Tensor(NDArray::zeros({1, 4, 4}, DType::F32)));
            })
                .find("expects an input of rank 4 (batch, 2 spatial axes and "
                      "channels), got [1, 4, 4]"),
            std::string::npos);
}

} // namespace
