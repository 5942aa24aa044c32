//===- ShapeFunctionsTest.cpp - kc shape rules ----------------------------===//

#include "ir/ShapeFunctions.h"

#include "gtest/gtest.h"

#include <limits>

using namespace kcc::shapes;

namespace {

template <typename T> T ok(llvm::Expected<T> v) {
  if (!v) {
    ADD_FAILURE() << llvm::toString(v.takeError());
    return T();
  }
  return *v;
}

template <typename T> std::string err(llvm::Expected<T> v) {
  if (v) {
    ADD_FAILURE() << "expected an error";
    return "";
  }
  return llvm::toString(v.takeError());
}

TEST(ShapeFunctions, Broadcast) {
  EXPECT_EQ(ok(broadcastShapes({3, 1, 5}, {2, 3, 4, 5})), (Dims{2, 3, 4, 5}));
  EXPECT_EQ(ok(broadcastShapes({}, {4, 4})), (Dims{4, 4}));
  EXPECT_EQ(ok(broadcastTo({5}, {3, 5})), (Dims{3, 5}));
  EXPECT_EQ(err(broadcastShapes({3, 4}, {5})),
            "shapes [3, 4] and [5] do not broadcast: dim 0 from the right is "
            "4 vs 5");
  EXPECT_EQ(err(broadcastTo({2, 5}, {3, 5})),
            "cannot broadcast [2, 5] to [3, 5]: dim 0 is 2, expected 1 or 3");
}

TEST(ShapeFunctions, Matmul) {
  EXPECT_EQ(ok(matmul({32, 784}, {784, 128}, false, false)), (Dims{32, 128}));
  EXPECT_EQ(ok(matmul({784, 32}, {128, 784}, true, true)), (Dims{32, 128}));
  EXPECT_EQ(err(matmul({32, 784}, {785, 128}, false, false)),
            "expects lhs columns (784) to match rhs rows (785): lhs [32, 784], "
            "rhs [785, 128]");
}

TEST(ShapeFunctions, ReshapeTransposeSlice) {
  EXPECT_EQ(ok(reshape({32, 7, 7, 64}, {32, -1})), (Dims{32, 3136}));
  EXPECT_NE(err(reshape({6}, {4})).find("6 elements"), std::string::npos);
  EXPECT_EQ(ok(transpose({2, 3, 4}, {2, 0, 1})), (Dims{4, 2, 3}));
  EXPECT_FALSE(err(transpose({2, 3}, {0, 0})).empty());
  EXPECT_EQ(ok(slice({4, 8}, {0, 2}, {4, 8}, {1, 2})), (Dims{4, 3}));
  EXPECT_FALSE(err(slice({4, 8}, {0, 2}, {4, 9}, {1, 1})).empty());
}

TEST(ShapeFunctions, ReduceAndArgmax) {
  EXPECT_EQ(ok(reduce({2, 3, 4}, {0, 2}, false)), (Dims{3}));
  EXPECT_EQ(ok(reduce({2, 3, 4}, {1}, true)), (Dims{2, 1, 4}));
  EXPECT_EQ(err(reduce({2, 3}, {1, 0}, false)),
            "axes [1, 0] must be sorted and unique");
  EXPECT_EQ(ok(argmax({32, 10}, -1)), (Dims{32}));
}

TEST(ShapeFunctions, ConvAndPool) {
  // Keras: 28x28, 3x3 valid -> 26x26; same stride 2 -> ceil(28/2) = 14.
  EXPECT_EQ(ok(conv2d({8, 28, 28, 1}, {3, 3, 1, 32}, {1, 1}, {1, 1}, false)),
            (Dims{8, 26, 26, 32}));
  EXPECT_EQ(ok(conv2d({8, 9, 7, 3}, {3, 3, 3, 4}, {2, 2}, {1, 1}, true)),
            (Dims{8, 5, 4, 4}));
  EXPECT_EQ(ok(conv2d({1, 9, 9, 1}, {3, 3, 1, 1}, {1, 1}, {2, 2}, false)),
            (Dims{1, 5, 5, 1}));
  EXPECT_EQ(err(conv2d({8, 28, 28, 3}, {3, 3, 1, 32}, {1, 1}, {1, 1}, false)),
            "expects input channels (3) to match filter input channels (1): "
            "input [8, 28, 28, 3], filter [3, 3, 1, 32]");
  EXPECT_EQ(ok(pool2d({8, 26, 26, 32}, {2, 2}, {2, 2}, false)),
            (Dims{8, 13, 13, 32}));
  EXPECT_EQ(ok(pool2d({8, 5, 5, 2}, {2, 2}, {2, 2}, true)), (Dims{8, 3, 3, 2}));
}

// Sizes computed from user input never wrap: each of these used to return a
// shape with a wrapped (0 or negative) dim or to divide by zero.
TEST(ShapeFunctions, OverflowIsAnError) {
  constexpr int64_t k32 = int64_t(1) << 32, k62 = int64_t(1) << 62;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(ok(numElements({32, 784})), 25088);
  EXPECT_EQ(ok(numElements({kMax})), kMax);
  EXPECT_EQ(err(numElements({k32, k32})),
            "shape [4294967296, 4294967296] has more than 2^63-1 elements");
  EXPECT_EQ(err(numElements({4, -2})), "shape [4, -2] has a negative dim");

  EXPECT_EQ(err(matmul({k32, 1}, {1, k32}, false, false)),
            "shape [4294967296, 4294967296] has more than 2^63-1 elements");
  EXPECT_EQ(err(broadcastShapes({k32, 1}, {1, k32})),
            "shape [4294967296, 4294967296] has more than 2^63-1 elements");
  EXPECT_EQ(err(broadcastTo({1, 1}, {k32, k32})),
            "shape [4294967296, 4294967296] has more than 2^63-1 elements");
  // Flatten of [32, 2^32, 2^32]: the product wrapped to 0, and the -1 then
  // divided by it.
  EXPECT_EQ(err(reshape({32, k32, k32}, {32, -1})),
            "shape [32, 4294967296, 4294967296] has more than 2^63-1 "
            "elements");
  EXPECT_EQ(err(reshape({8}, {k32, k32, -1})),
            "target shape [4294967296, 4294967296, -1] has more than 2^63-1 "
            "elements");
  EXPECT_EQ(err(concat({{k62}, {k62}}, 0)),
            "the inputs' dim 0 sums to more than 2^63-1");
  EXPECT_EQ(ok(concat({{k62}, {k62 - 1}}, 0)), (Dims{kMax}));

  // Window arithmetic with extreme strides, windows and dilations.
  EXPECT_EQ(ok(slice({10}, {0}, {10}, {kMax})), (Dims{1}));
  EXPECT_EQ(ok(slice({10}, {0}, {10}, {3})), (Dims{4}));
  EXPECT_EQ(windowOutputSize(10, 3, kMax, 1, /*samePadding=*/true), 1);
  EXPECT_EQ(windowOutputSize(kMax, 3, 2, 1, /*samePadding=*/true),
            kMax / 2 + 1);
  EXPECT_EQ(windowOutputSize(10, k62, 1, 4, /*samePadding=*/false), 0);
  EXPECT_EQ(err(conv2d({1, 8, 8, 1}, {k32, 3, 1, 1}, {1, 1}, {k32, 1}, false)),
            "window 4294967296x3 (dilations [4294967296, 1]) is larger than "
            "the input [1, 8, 8, 1] with valid padding");
  EXPECT_EQ(ok(pool2d({1, 8, 8, 1}, {k62, 2}, {4, 1}, true)),
            (Dims{1, 2, 8, 1}));
  EXPECT_EQ(err(pool2d({1, 8, 8, 1}, {kMax, 2}, {4, 1}, true)),
            "window 9223372036854775807x2 with strides [4, 1] and dilations "
            "[1, 1] overflows int64 when padded");
  EXPECT_EQ(
      err(conv2d({1, 65536, 65536, 1}, {1, 1, 1, k32}, {1, 1}, {1, 1}, false)),
      "shape [1, 65536, 65536, 4294967296] has more than 2^63-1 "
      "elements");
}

} // namespace
