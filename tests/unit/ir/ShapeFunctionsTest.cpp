//===- ShapeFunctionsTest.cpp - kc shape rules ----------------------------===//

#include "ir/ShapeFunctions.h"

#include "gtest/gtest.h"

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

} // namespace
