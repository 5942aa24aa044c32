//===- CategoricalTest.cpp - CategoryEncoding and Discretization, eager ---===//
//
// Hand-computed encodings: ids outside [0, num_tokens) encode to zeros as
// in Keras (jax.nn.one_hot), multi_hot truncates float ids as Keras's cast
// to int32 does, Discretization's bucket counts the boundaries at or
// below a value (numpy's digitize), and the shapes Keras's own encoding
// makes meaningless are errors.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "tests/unit/ErrorOf.h"

#include "gtest/gtest.h"

using namespace kcc;
using kcc::testing::errorOf;

namespace {

Tensor ids(const Shape &shape, const std::vector<double> &values) {
  return Tensor(NDArray::fromVector(shape, values));
}

TEST(CategoryEncoding, OneHotMultiHotAndCount) {
  Tensor x = ids({2, 3}, {0, 2, 2, 3, 7, -1});
  EXPECT_EQ(CategoryEncoding(4, "multi_hot")(x).array().toVector(),
            (std::vector<double>{1, 0, 1, 0, /**/ 0, 0, 0, 1}));
  EXPECT_EQ(CategoryEncoding(4, "count")(x).array().toVector(),
            (std::vector<double>{1, 0, 2, 0, /**/ 0, 0, 0, 1}));
  // [batch, 1] is squeezed: one row per example.
  Tensor y = CategoryEncoding(3, "one_hot")(ids({2, 1}, {2, 5}));
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.array().toVector(), (std::vector<double>{0, 0, 1, 0, 0, 0}));
}

TEST(CategoryEncoding, MultiHotTruncatesFloatIdsAsKerasCasts) {
  Tensor x = ids({1, 2}, {1.7, 2.2});
  EXPECT_EQ(CategoryEncoding(3, "multi_hot")(x).array().toVector(),
            (std::vector<double>{0, 1, 1}));
  // one_hot compares the values themselves: 1.7 is no id.
  EXPECT_EQ(CategoryEncoding(3, "one_hot")(ids({1}, {1.7})).array().toVector(),
            (std::vector<double>{0, 0, 0}));
}

TEST(Discretization, BucketsCountTheBoundariesAtOrBelow) {
  Tensor x = ids({1, 5}, {-3, 0, 0.5, 1, 9});
  Tensor b = Discretization({0.0, 1.0}, "int")(x);
  EXPECT_EQ(b.dtype(), DType::I32);
  EXPECT_EQ(b.array().toVector(), (std::vector<double>{0, 1, 1, 2, 2}));
  EXPECT_EQ(Discretization({0.0, 1.0}, "count")(x).array().toVector(),
            (std::vector<double>{1, 2, 2}));
}

TEST(Categorical, MeaninglessShapesAndValuesAreErrors) {
  EXPECT_NE(errorOf([] {
              CategoryEncoding(4, "multi_hot")(ids({3}, {0, 1, 2}));
            }).find("output_mode 'multi_hot' expects ids of rank 2"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              CategoryEncoding(0);
            }).find("num_tokens must be in [1, 2^24], got 0"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              CategoryEncoding(4, "tf_idf");
            }).find("output_mode 'tf_idf' is not supported"),
            std::string::npos);
  EXPECT_NE(errorOf([] {
              Discretization({1.0, 0.0});
            }).find("bin_boundaries must be finite and sorted"),
            std::string::npos);
}

} // namespace
