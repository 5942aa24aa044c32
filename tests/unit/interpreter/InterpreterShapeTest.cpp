//===- InterpreterShapeTest.cpp - layout, reduction and constant ops ------===//
//
// broadcast_to, transpose, concat, slice, reshape, the reductions, argmax,
// one_hot and constants, each against index arithmetic written here.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/interpreter/InterpreterTestUtil.h"

#include <algorithm>
#include <numeric>

using namespace kcc;
using namespace kcc::testing;

namespace {

class InterpreterShapeTest : public InterpreterFixture,
                             public ::testing::WithParamInterface<DType> {
protected:
  DType dtype() const { return GetParam(); }
  std::string type() const { return dtypeName(GetParam()); }
  double tol() const { return toleranceFor(GetParam()); }
  NDArray array(const Shape &shape, const std::vector<double> &values) {
    return NDArray::fromVector(shape, values, dtype());
  }
};

TEST_P(InterpreterShapeTest, LayoutOps) {
  const char *text = R"mlir(
    func.func @f(%col: tensor<3x1x$T>, %x: tensor<2x3x4x$T>, %a: tensor<2x3x$T>,
                 %b: tensor<2x2x$T>, %s: tensor<4x8x$T>)
        -> (tensor<2x3x4x$T>, tensor<4x2x3x$T>, tensor<2x5x$T>, tensor<2x2x$T>,
            tensor<6x4x$T>) {
      %bc = kc.broadcast_to %col : tensor<3x1x$T> -> tensor<2x3x4x$T>
      %t = kc.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4x$T> -> tensor<4x2x3x$T>
      %c = kc.concat %a, %b {axis = 1 : i64} : (tensor<2x3x$T>, tensor<2x2x$T>) -> tensor<2x5x$T>
      %sl = kc.slice %s {start = array<i64: 1, 2>, limit = array<i64: 4, 8>, strides = array<i64: 2, 3>} : tensor<4x8x$T> -> tensor<2x2x$T>
      %r = kc.reshape %x : tensor<2x3x4x$T> -> tensor<6x4x$T>
      %n = kc.neg %r : tensor<6x4x$T>
      return %bc, %t, %c, %sl, %n : tensor<2x3x4x$T>, tensor<4x2x3x$T>, tensor<2x5x$T>, tensor<2x2x$T>, tensor<6x4x$T>
    })mlir";
  auto col = randomValues(3, -1, 1, 21), x = randomValues(24, -1, 1, 22),
       a = randomValues(6, -1, 1, 23), b = randomValues(4, -1, 1, 24),
       s = randomValues(32, -1, 1, 25);
  auto out = run(withType(text, type()),
                 {array({3, 1}, col), array({2, 3, 4}, x), array({2, 3}, a),
                  array({2, 2}, b), array({4, 8}, s)});
  ASSERT_EQ(out.size(), 5u);

  std::vector<double> bc(24), t(24), c(10), sl(4), n(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        bc[(i * 3 + j) * 4 + k] = col[j];
        // result[k, i, j] = x[i, j, k] for perm (2, 0, 1).
        t[(k * 2 + i) * 3 + j] = x[(i * 3 + j) * 4 + k];
      }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      c[i * 5 + j] = j < 3 ? a[i * 3 + j] : b[i * 2 + (j - 3)];
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      sl[i * 2 + j] = s[(1 + 2 * i) * 8 + (2 + 3 * j)];
  for (int i = 0; i < 24; ++i)
    n[i] = -x[i];
  expectNear(out[0], {2, 3, 4}, bc, tol(), "broadcast_to");
  expectNear(out[1], {4, 2, 3}, t, tol(), "transpose");
  expectNear(out[2], {2, 5}, c, tol(), "concat");
  expectNear(out[3], {2, 2}, sl, tol(), "slice");
  expectNear(out[4], {6, 4}, n, tol(), "reshape then neg");
}

TEST_P(InterpreterShapeTest, ReductionsArgmaxAndOneHot) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<2x3x4x$T>, %labels: tensor<4xi32>)
        -> (tensor<1x3x1x$T>, tensor<2x4x$T>, tensor<$T>, tensor<2x4xi64>,
            tensor<4x4x$T>) {
      %sum = kc.reduce_sum %x {axes = array<i64: 0, 2>, keepdims = true} : tensor<2x3x4x$T> -> tensor<1x3x1x$T>
      %max = kc.reduce_max %x {axes = array<i64: 1>} : tensor<2x3x4x$T> -> tensor<2x4x$T>
      %mean = kc.reduce_mean %x {axes = array<i64: 0, 1, 2>} : tensor<2x3x4x$T> -> tensor<$T>
      %arg = kc.argmax %x {axis = 1 : i64} : tensor<2x3x4x$T> -> tensor<2x4xi64>
      %oh = kc.one_hot %labels : tensor<4xi32> -> tensor<4x4x$T>
      return %sum, %max, %mean, %arg, %oh : tensor<1x3x1x$T>, tensor<2x4x$T>, tensor<$T>, tensor<2x4xi64>, tensor<4x4x$T>
    })mlir";
  auto x = randomValues(24, -1, 1, 31);
  NDArray labels = NDArray::empty({4}, DType::I32);
  // -1 and 4 are out of range for depth 4: their rows are all zero.
  std::vector<int32_t> labelValues = {0, 3, -1, 4};
  std::copy(labelValues.begin(), labelValues.end(), labels.data<int32_t>());
  auto out = run(withType(text, type()), {array({2, 3, 4}, x), labels});
  ASSERT_EQ(out.size(), 5u);

  auto at = [&](int i, int j, int k) { return x[(i * 3 + j) * 4 + k]; };
  std::vector<double> sum(3, 0.0), max(8), argmax(8), oneHot(16, 0.0);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k)
        sum[j] += at(i, j, k);
  for (int i = 0; i < 2; ++i)
    for (int k = 0; k < 4; ++k) {
      int best = 0;
      for (int j = 1; j < 3; ++j)
        if (at(i, j, k) > at(i, best, k))
          best = j;
      max[i * 4 + k] = at(i, best, k);
      argmax[i * 4 + k] = best;
    }
  double mean = std::accumulate(x.begin(), x.end(), 0.0) / 24;
  for (int r = 0; r < 4; ++r)
    if (labelValues[r] >= 0 && labelValues[r] < 4)
      oneHot[r * 4 + labelValues[r]] = 1;
  expectNear(out[0], {1, 3, 1}, sum, tol(), "reduce_sum keepdims");
  expectNear(out[1], {2, 4}, max, tol(), "reduce_max");
  expectNear(out[2], {}, {mean}, tol(), "reduce_mean to a scalar");
  EXPECT_EQ(out[3].dtype(), DType::I64);
  expectNear(out[3], {2, 4}, argmax, 0, "argmax");
  expectNear(out[4], {4, 4}, oneHot, 0, "one_hot");
}

TEST_P(InterpreterShapeTest, DenseAndSplatConstants) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<2x3x$T>) -> (tensor<2x3x$T>, tensor<2xi64>, tensor<3xi1>) {
      %w = kc.constant dense<[[1.5, -2.0, 0.25], [4.0, 8.0, -0.5]]> : tensor<2x3x$T>
      %h = kc.constant dense<0.5> : tensor<2x3x$T>
      %i = kc.constant dense<[-7, 9000000000]> : tensor<2xi64>
      %m = kc.constant dense<[true, false, true]> : tensor<3xi1>
      %0 = kc.mul %x, %w : tensor<2x3x$T>
      %1 = kc.add %0, %h : tensor<2x3x$T>
      return %1, %i, %m : tensor<2x3x$T>, tensor<2xi64>, tensor<3xi1>
    })mlir";
  std::vector<double> w = {1.5, -2.0, 0.25, 4.0, 8.0, -0.5};
  auto x = randomValues(6, -1, 1, 41);
  std::vector<double> expected(6);
  for (int i = 0; i < 6; ++i)
    expected[i] = x[i] * w[i] + 0.5;
  auto out = run(withType(text, type()), {array({2, 3}, x)});
  ASSERT_EQ(out.size(), 3u);
  expectNear(out[0], {2, 3}, expected, tol(), "x * w + 0.5");
  ASSERT_EQ(out[1].dtype(), DType::I64);
  EXPECT_EQ(out[1].data<int64_t>()[0], -7);
  EXPECT_EQ(out[1].data<int64_t>()[1], 9000000000);
  expectNear(out[2], {3}, {1, 0, 1}, 0, "i1 constant");
}

TEST_F(InterpreterFixture, HalfPrecisionConstantsKeepTheirBits) {
  // f16/bf16 constants are converted bit-exactly; cast to f32 reads them back.
  const char *text = R"mlir(
    func.func @f() -> (tensor<3xf32>, tensor<3xf32>) {
      %h = kc.constant dense<[0.333251953125, -65504.0, 6.103515625e-05]> : tensor<3xf16>
      %b = kc.constant dense<[0.333984375, -3.0e38, 1.0]> : tensor<3xbf16>
      %0 = kc.cast %h : tensor<3xf16> -> tensor<3xf32>
      %1 = kc.cast %b : tensor<3xbf16> -> tensor<3xf32>
      return %0, %1 : tensor<3xf32>, tensor<3xf32>
    })mlir";
  auto out = run(text, {});
  ASSERT_EQ(out.size(), 2u);
  // Every f16 value above is exact; -3e38 rounds to the bf16 -0x1.c4p+127.
  expectNear(out[0], {3}, {0.333251953125, -65504.0, 6.103515625e-05}, 0,
             "f16");
  expectNear(out[1], {3}, {0.333984375, -0x1.c4p+127, 1.0}, 0, "bf16");
}

INSTANTIATE_TEST_SUITE_P(FloatTypes, InterpreterShapeTest,
                         ::testing::Values(DType::F32, DType::F64),
                         [](const ::testing::TestParamInfo<DType> &info) {
                           return std::string(dtypeName(info.param));
                         });

} // namespace
