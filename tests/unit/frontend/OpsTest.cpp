//===- OpsTest.cpp - Eager frontend ops against hand-computed values ------===//

#include "kcc/kcc.h"

#include "gtest/gtest.h"

using namespace kcc;

namespace {

Tensor arr(const Shape &shape, const std::vector<double> &v) {
  return Tensor(NDArray::fromVector(shape, v));
}

void expectValues(const Tensor &t, const Shape &shape,
                  const std::vector<double> &expected, double tol = 1e-6) {
  ASSERT_TRUE(t.isConcrete());
  ASSERT_EQ(t.shape(), shape);
  std::vector<double> got = t.toVector();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], expected[i], tol) << "element " << i;
}

TEST(FrontendOps, BroadcastAddColumnAndRow) {
  // [3,1] + [4] -> [3,4], out[i][j] = a[i] + b[j].
  Tensor a = arr({3, 1}, {1, 2, 3});
  Tensor b = arr({4}, {10, 20, 30, 40});
  expectValues(ops::add(a, b), {3, 4},
               {11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43});
  expectValues(a - b, {3, 4},
               {-9, -19, -29, -39, -8, -18, -28, -38, -7, -17, -27, -37});
}

TEST(FrontendOps, BroadcastMismatchNamesBothShapes) {
  LayerScope scope("my_layer");
  try {
    ops::mul(arr({2, 3}, {1, 2, 3, 4, 5, 6}), arr({4}, {1, 2, 3, 4}));
    FAIL() << "expected kcc::Error";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("layer 'my_layer'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[2, 3]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4]"), std::string::npos) << msg;
  }
}

TEST(FrontendOps, MatmulAndTransposeFlags) {
  Tensor a = arr({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = arr({3, 2}, {7, 8, 9, 10, 11, 12});
  // [[1*7+2*9+3*11, 1*8+2*10+3*12], [4*7+5*9+6*11, 4*8+5*10+6*12]]
  expectValues(ops::matmul(a, b), {2, 2}, {58, 64, 139, 154});
  // a^T a: 3x3 Gram matrix of a's columns.
  expectValues(ops::matmul(a, a, /*transposeA=*/true), {3, 3},
               {17, 22, 27, 22, 29, 36, 27, 36, 45});
}

TEST(FrontendOps, MatmulErrorNamesLayerAndShapes) {
  LayerScope scope("dense_7");
  try {
    ops::matmul(arr({4, 100}, std::vector<double>(400, 1)),
                arr({784, 2}, std::vector<double>(1568, 1)));
    FAIL() << "expected kcc::Error";
  } catch (const Error &e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("dense_7"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[4, 100]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[784, 2]"), std::string::npos) << msg;
  }
}

TEST(FrontendOps, UnaryActivations) {
  Tensor x = arr({4}, {-2, -0.5, 0, 3});
  expectValues(ops::relu(x), {4}, {0, 0, 0, 3});
  std::vector<double> sig, th, gelu;
  for (double v : {-2.0, -0.5, 0.0, 3.0}) {
    sig.push_back(1 / (1 + std::exp(-v)));
    th.push_back(std::tanh(v));
    gelu.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
  }
  expectValues(ops::sigmoid(x), {4}, sig);
  expectValues(ops::tanh(x), {4}, th);
  expectValues(ops::gelu(x), {4}, gelu);
  EXPECT_THROW(ops::activation(x, "swishy"), Error);
}

TEST(FrontendOps, SoftmaxRowsSumToOne) {
  Tensor x = arr({2, 3}, {1, 2, 3, 0, 0, 0});
  double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  expectValues(ops::softmax(x), {2, 3},
               {std::exp(1.0) / z, std::exp(2.0) / z, std::exp(3.0) / z,
                1 / 3.0, 1 / 3.0, 1 / 3.0});
  expectValues(ops::logSoftmax(x), {2, 3},
               {1 - std::log(z), 2 - std::log(z), 3 - std::log(z),
                -std::log(3.0), -std::log(3.0), -std::log(3.0)});
}

TEST(FrontendOps, ReductionsWithNegativeAxes) {
  Tensor x = arr({2, 3}, {1, 5, 3, 4, 2, 6});
  expectValues(ops::reduceSum(x, {-1}), {2}, {9, 12});
  expectValues(ops::reduceMax(x, {0}, /*keepdims=*/true), {1, 3}, {4, 5, 6});
  expectValues(ops::reduceMean(x, {1, 0}), {}, {3.5});
  Tensor idx = ops::argmax(x, 1);
  EXPECT_EQ(idx.dtype(), DType::I64);
  expectValues(idx, {2}, {1, 2});
}

TEST(FrontendOps, LayoutOps) {
  Tensor x = arr({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor r = ops::reshape(x, {3, -1});
  expectValues(r, {3, 2}, {1, 2, 3, 4, 5, 6});
  // An eager reshape is a view of the same storage.
  EXPECT_EQ(r.array().rawData(), x.array().rawData());
  expectValues(ops::transpose(x, {1, 0}), {3, 2}, {1, 4, 2, 5, 3, 6});
  expectValues(ops::concat({x, x}, 0), {4, 3},
               {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  expectValues(ops::slice(x, {0, 0}, {2, 3}, {1, 2}), {2, 2}, {1, 3, 4, 6});
  EXPECT_THROW(ops::reshape(x, {4, 2}), Error);
}

TEST(FrontendOps, Conv2DAndPoolingByHand) {
  // 1x3x3x1 input, 2x2x1x1 filter of ones: each output sums a 2x2 window.
  Tensor x = arr({1, 3, 3, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = arr({2, 2, 1, 1}, {1, 1, 1, 1});
  expectValues(ops::conv2d(x, w), {1, 2, 2, 1}, {12, 16, 24, 28});
  // SAME padding pads at the bottom/right (TF rule): last row/col see zeros.
  expectValues(ops::conv2d(x, w, {1, 1}, ops::Padding::Same), {1, 3, 3, 1},
               {12, 16, 9, 24, 28, 15, 15, 17, 9});
  expectValues(ops::maxPool2d(x, {2, 2}, {1, 1}), {1, 2, 2, 1}, {5, 6, 8, 9});
  expectValues(ops::avgPool2d(x, {2, 2}, {1, 1}), {1, 2, 2, 1}, {3, 4, 6, 7});
}

TEST(FrontendOps, CompareSelectCast) {
  Tensor a = arr({4}, {1, 5, 3, 7});
  Tensor m = ops::compare(ops::CompareKind::GT, a, ops::scalar(4));
  EXPECT_EQ(m.dtype(), DType::I1);
  expectValues(m, {4}, {0, 1, 0, 1});
  expectValues(ops::select(m, a, ops::scalar(0)), {4}, {0, 5, 0, 7});
  expectValues(ops::cast(m, DType::F32), {4}, {0, 1, 0, 1});
}

TEST(FrontendOps, RandomUniformIsAPureFunctionOfSeedAndCounter) {
  Tensor c0 = ops::full({}, 0, DType::I64), c1 = ops::full({}, 1, DType::I64);
  std::vector<double> a = ops::randomUniform({1000}, 7, c0).toVector();
  std::vector<double> b = ops::randomUniform({1000}, 7, c0).toVector();
  std::vector<double> c = ops::randomUniform({1000}, 7, c1).toVector();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = 0;
  for (double v : a) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
    mean += v / a.size();
  }
  EXPECT_NEAR(mean, 0.5, 0.05);
}

TEST(FrontendOps, SymbolicOpsOnlyComputeShapes) {
  Tensor s = Tensor::symbolic({8, 3}, DType::F32);
  Tensor y = ops::add(s, arr({3}, {1, 2, 3}));
  EXPECT_TRUE(y.isSymbolic());
  EXPECT_EQ(y.shape(), (Shape{8, 3}));
  EXPECT_THROW(y.array(), Error);
}

} // namespace
