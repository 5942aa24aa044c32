//===- NonFiniteOpsTest.cpp - NaN and inf, compiled and interpreted -------===//
//
// The ops whose NaN behaviour is a choice (max/min, relu, the reductions,
// argmax, pooling, the fused GEMM/convolution epilogues, the cross-entropy
// clip) on inputs holding NaN and +-inf: the interpreter must follow Keras
// (relu(NaN) = NaN, max(NaN, x) = max(x, NaN) = NaN, a window or a row
// holding a NaN pools or reduces to NaN) and the compiled code must agree
// with it element by element, NaN where NaN.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/codegen/CodegenTestUtil.h"

#include <limits>

using namespace kcc;
using namespace kcc::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class NonFinite : public CompiledVsInterpreted {
protected:
  /// Compiles @f, runs it both ways on `args` (random, with NaN and inf
  /// planted by `plant`, when empty) and returns the interpreter's results
  /// after checking the compiled ones against them.
  std::vector<NDArray>
  run(const std::string &text, std::vector<NDArray> args = {},
      const std::function<void(std::vector<NDArray> &)> &plant = {}) {
    if (!parse(text))
      return {};
    try {
      CompiledFunction fn = CompiledFunction::compile(*module, "f");
      if (args.empty())
        args = randomArgs(fn);
      if (plant)
        plant(args);
      auto func = module->lookupSymbol<mlir::func::FuncOp>("f");
      std::vector<NDArray> expected = interpreter.run(func, args);
      std::vector<NDArray> actual = fn.run(args);
      expectClose(expected, actual, tolerance());
      for (size_t r = 0; r < expected.size(); ++r)
        for (int64_t i = 0; i < expected[r].numel(); ++i)
          EXPECT_EQ(std::isnan(expected[r].at(i)), std::isnan(actual[r].at(i)))
              << "result " << r << " element " << i;
      return expected;
    } catch (const Error &e) {
      ADD_FAILURE() << "kcc::Error: " << e.what();
      return {};
    }
  }

  NDArray values(const Shape &shape, const std::vector<double> &v) {
    return NDArray::fromVector(shape, v,
                               type() == "f32" ? DType::F32 : DType::F64);
  }
};

TEST_P(NonFinite, MaxMinReluPropagateNaN) {
  std::vector<NDArray> r =
      run(R"mlir(
func.func @f(%x: tensor<8x$T>, %y: tensor<8x$T>)
    -> (tensor<8x$T>, tensor<8x$T>, tensor<8x$T>, tensor<8x$T>, tensor<8x$T>) {
  %0 = kc.max %x, %y : tensor<8x$T>
  %1 = kc.max %y, %x : tensor<8x$T>
  %2 = kc.min %x, %y : tensor<8x$T>
  %3 = kc.relu %x : tensor<8x$T>
  %4 = kc.sigmoid %x : tensor<8x$T>
  return %0, %1, %2, %3, %4 : tensor<8x$T>, tensor<8x$T>, tensor<8x$T>, tensor<8x$T>, tensor<8x$T>
}
)mlir",
          {values({8}, {kNaN, 1, -kInf, kInf, kNaN, -2, 0, 3}),
           values({8}, {1, kNaN, 0, -kInf, kNaN, kNaN, -kInf, kInf})});
  ASSERT_EQ(r.size(), 5u);
  for (int64_t i : {0, 1, 4, 5}) { // a NaN on either side
    EXPECT_TRUE(std::isnan(r[0].at(i))) << "max element " << i;
    EXPECT_TRUE(std::isnan(r[1].at(i))) << "max (swapped) element " << i;
    EXPECT_TRUE(std::isnan(r[2].at(i))) << "min element " << i;
  }
  EXPECT_EQ(r[0].at(2), 0);
  EXPECT_EQ(r[0].at(3), kInf);
  EXPECT_EQ(r[2].at(3), -kInf);
  EXPECT_EQ(r[0].at(7), kInf);
  // relu(NaN) = NaN, relu(-inf) = 0, relu(inf) = inf.
  EXPECT_TRUE(std::isnan(r[3].at(0)));
  EXPECT_EQ(r[3].at(2), 0);
  EXPECT_EQ(r[3].at(3), kInf);
  EXPECT_TRUE(std::isnan(r[4].at(0)));
  EXPECT_EQ(r[4].at(2), 0);
  EXPECT_EQ(r[4].at(3), 1);
}

TEST_P(NonFinite, ReductionsSoftmaxAndArgmax) {
  // Row 1 holds a NaN, row 3 a +inf, row 4 a -inf; the others are finite.
  auto plant = [&](std::vector<NDArray> &a) {
    a[0].set(1 * 10 + 6, kNaN);
    a[0].set(3 * 10 + 2, kInf);
    a[0].set(4 * 10 + 0, -kInf);
  };
  std::vector<NDArray> r = run(R"mlir(
func.func @f(%x: tensor<6x10x$T>)
    -> (tensor<6x$T>, tensor<10x$T>, tensor<6x$T>, tensor<6x10x$T>, tensor<6x10x$T>, tensor<6xi64>) {
  %0 = kc.reduce_max %x {axes = array<i64: 1>} : tensor<6x10x$T> -> tensor<6x$T>
  %1 = kc.reduce_max %x {axes = array<i64: 0>} : tensor<6x10x$T> -> tensor<10x$T>
  %2 = kc.reduce_sum %x {axes = array<i64: 1>} : tensor<6x10x$T> -> tensor<6x$T>
  %3 = kc.softmax %x : tensor<6x10x$T>
  %4 = kc.log_softmax %x {axis = 1 : i64} : tensor<6x10x$T>
  %5 = kc.argmax %x {axis = 1 : i64} : tensor<6x10x$T> -> tensor<6xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<6x$T>, tensor<10x$T>, tensor<6x$T>, tensor<6x10x$T>, tensor<6x10x$T>, tensor<6xi64>
}
)mlir",
                               {}, plant);
  ASSERT_EQ(r.size(), 6u);
  EXPECT_TRUE(std::isnan(r[0].at(1)));
  EXPECT_EQ(r[0].at(3), kInf);
  EXPECT_TRUE(std::isfinite(r[0].at(0)) && std::isfinite(r[0].at(4)));
  EXPECT_TRUE(std::isnan(r[1].at(6)));
  EXPECT_EQ(r[1].at(2), kInf);
  EXPECT_TRUE(std::isfinite(r[1].at(0)));
  for (int64_t j = 0; j < 10; ++j) {
    EXPECT_TRUE(std::isnan(r[3].at(10 + j)) && std::isnan(r[4].at(10 + j)));
    EXPECT_TRUE(std::isfinite(r[3].at(j)) && std::isfinite(r[3].at(40 + j)));
  }
  EXPECT_EQ(r[5].at(1), 6); // the NaN is the maximum
  EXPECT_EQ(r[5].at(3), 2);
}

TEST_P(NonFinite, FusedDenseReluKeepsNaN) {
  // A NaN weight makes one hidden unit NaN for every row: the bias + relu
  // epilogue fused into the GEMM must keep it, and the logits after it.
  auto plant = [](std::vector<NDArray> &a) { a[0].set(3 * 16 + 5, kNaN); };
  std::vector<NDArray> r = run(R"mlir(
func.func @f(%w1: tensor<20x16x$T>, %b1: tensor<16x$T>, %w2: tensor<16x10x$T>, %b2: tensor<10x$T>, %x: tensor<8x20x$T>)
    -> (tensor<8x16x$T>, tensor<8x10x$T>) {
  %0 = kc.matmul %x, %w1 : tensor<8x20x$T>, tensor<20x16x$T> -> tensor<8x16x$T>
  %1 = kc.broadcast_to %b1 : tensor<16x$T> -> tensor<8x16x$T>
  %2 = kc.add %0, %1 : tensor<8x16x$T>
  %3 = kc.relu %2 : tensor<8x16x$T>
  %4 = kc.matmul %3, %w2 : tensor<8x16x$T>, tensor<16x10x$T> -> tensor<8x10x$T>
  %5 = kc.broadcast_to %b2 : tensor<10x$T> -> tensor<8x10x$T>
  %6 = kc.add %4, %5 : tensor<8x10x$T>
  %7 = kc.softmax %6 : tensor<8x10x$T>
  return %3, %7 : tensor<8x16x$T>, tensor<8x10x$T>
}
)mlir",
                               {}, plant);
  ASSERT_EQ(r.size(), 2u);
  for (int64_t row = 0; row < 8; ++row) {
    EXPECT_TRUE(std::isnan(r[0].at(row * 16 + 5))) << "row " << row;
    EXPECT_TRUE(std::isfinite(r[0].at(row * 16 + 4))) << "row " << row;
    EXPECT_TRUE(std::isnan(r[1].at(row * 10))) << "row " << row;
  }
}

TEST_P(NonFinite, FusedConvReluAndPoolingKeepNaN) {
  // One NaN pixel: the fused conv + bias + relu, the max pooling and the
  // max-pool gradient (with and without the relu mask) on NaN windows.
  auto plant = [](std::vector<NDArray> &a) {
    a[0].set(((0 * 8 + 2) * 8 + 3) * 2 + 1, kNaN);
  };
  std::vector<NDArray> r = run(R"mlir(
func.func @f(%x: tensor<2x8x8x2x$T>, %w: tensor<3x3x2x4x$T>, %b: tensor<4x$T>, %dy: tensor<2x3x3x4x$T>, %dy2: tensor<2x2x2x4x$T>)
    -> (tensor<2x6x6x4x$T>, tensor<2x3x3x4x$T>, tensor<2x6x6x4x$T>, tensor<2x6x6x4x$T>) {
  %c = kc.conv2d %x, %w : tensor<2x8x8x2x$T>, tensor<3x3x2x4x$T> -> tensor<2x6x6x4x$T>
  %bb = kc.broadcast_to %b : tensor<4x$T> -> tensor<2x6x6x4x$T>
  %s = kc.add %c, %bb : tensor<2x6x6x4x$T>
  %h = kc.relu %s : tensor<2x6x6x4x$T>
  %p = kc.max_pool2d %h {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x6x6x4x$T> -> tensor<2x3x3x4x$T>
  %g = kc.max_pool2d_grad %h, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x6x6x4x$T>, tensor<2x3x3x4x$T> -> tensor<2x6x6x4x$T>
  %g2 = kc.max_pool2d_grad %h, %dy2 {window = array<i64: 3, 3>, strides = array<i64: 2, 2>} : tensor<2x6x6x4x$T>, tensor<2x2x2x4x$T> -> tensor<2x6x6x4x$T>
  return %h, %p, %g, %g2 : tensor<2x6x6x4x$T>, tensor<2x3x3x4x$T>, tensor<2x6x6x4x$T>, tensor<2x6x6x4x$T>
}
)mlir",
                               {}, plant);
  ASSERT_EQ(r.size(), 4u);
  // The NaN pixel (2, 3) reaches conv outputs (0..2, 1..3) of image 0, all
  // channels, through relu, and every pooling window over them.
  auto h = [&](int64_t y, int64_t x, int64_t c) {
    return r[0].at(((0 * 6 + y) * 6 + x) * 4 + c);
  };
  for (int64_t c = 0; c < 4; ++c) {
    EXPECT_TRUE(std::isnan(h(0, 1, c)) && std::isnan(h(2, 3, c))) << c;
    EXPECT_TRUE(std::isfinite(h(3, 3, c)) && std::isfinite(h(0, 4, c))) << c;
    EXPECT_TRUE(std::isnan(r[1].at(((0 * 3 + 0) * 3 + 0) * 4 + c))) << c;
    EXPECT_TRUE(std::isnan(r[1].at(((0 * 3 + 1) * 3 + 1) * 4 + c))) << c;
    EXPECT_TRUE(std::isfinite(r[1].at(((0 * 3 + 2) * 3 + 2) * 4 + c))) << c;
  }
  // The gradient of window (0, 0) goes to its first NaN, (0, 1), in both
  // the tiled (2x2 / 2) and the overlapping (3x3 / 2) kernels.
  auto at = [](const NDArray &a, int64_t y, int64_t x, int64_t c) {
    return a.at(((0 * 6 + y) * 6 + x) * 4 + c);
  };
  for (const NDArray *g : {&r[2], &r[3]}) {
    int64_t taken = 0;
    for (int64_t y = 0; y < 2; ++y)
      for (int64_t x = 0; x < 2; ++x)
        taken += at(*g, y, x, 0) != 0;
    EXPECT_EQ(taken, 1);
    EXPECT_NE(at(*g, 0, 1, 0), 0);
  }
}

TEST_P(NonFinite, CrossEntropyClipKeepsNaN) {
  // Keras's clip(p, eps, 1 - eps) written with kc.max / kc.min.
  std::vector<NDArray> r = run(R"mlir(
func.func @f(%p: tensor<6x$T>) -> tensor<6x$T> {
  %lo = kc.constant dense<1.0e-07> : tensor<6x$T>
  %hi = kc.constant dense<0.9999999> : tensor<6x$T>
  %0 = kc.max %p, %lo : tensor<6x$T>
  %1 = kc.min %0, %hi : tensor<6x$T>
  %2 = kc.log %1 : tensor<6x$T>
  return %2 : tensor<6x$T>
}
)mlir",
                               {values({6}, {kNaN, 0, 0.5, kInf, -kInf, 1})});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_TRUE(std::isnan(r[0].at(0)));
  for (int64_t i = 1; i < 6; ++i)
    EXPECT_TRUE(std::isfinite(r[0].at(i))) << i;
}

INSTANTIATE_TEST_SUITE_P(Types, NonFinite, ::testing::Values("f32", "f64"),
                         [](const auto &info) { return info.param; });

} // namespace
