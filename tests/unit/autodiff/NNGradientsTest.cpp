//===- NNGradientsTest.cpp - gradient checks of matmul, softmax, conv, pool,
//                            and of small models ---------------------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "gtest/gtest.h"

#include <sstream>

using namespace kcc;
using namespace kcc::test;

namespace {

TEST(NNGradients, MatmulAllTransposeCombinations) {
  mlir::MLIRContext ctx;
  const int64_t m = 3, k = 4, n = 5;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Shape a = ta ? Shape{k, m} : Shape{m, k};
      Shape b = tb ? Shape{n, k} : Shape{k, n};
      std::ostringstream body;
      body << "  %y = kc.matmul %x0, %x1 {transpose_lhs = "
           << (ta ? "true" : "false")
           << ", transpose_rhs = " << (tb ? "true" : "false")
           << "} : " << f64Tensor(a) << ", " << f64Tensor(b) << " -> "
           << f64Tensor({m, n});
      SCOPED_TRACE(body.str());
      EXPECT_GRADIENTS_MATCH(checkOp(
          ctx, body.str(), {f64Tensor(a), f64Tensor(b)}, f64Tensor({m, n}),
          {uniform(a, -1, 1, 1 + 2 * ta + tb),
           uniform(b, -1, 1, 5 + 2 * ta + tb)}));
    }
  }
}

TEST(NNGradients, SoftmaxAndLogSoftmax) {
  mlir::MLIRContext ctx;
  const std::string t = "tensor<3x5xf64>";
  for (const char *op : {"softmax", "log_softmax"}) {
    for (int axis : {-1, 0}) {
      std::string body = std::string("  %y = kc.") + op +
                         " %x0 {axis = " + std::to_string(axis) +
                         " : i64} : " + t;
      SCOPED_TRACE(body);
      EXPECT_GRADIENTS_MATCH(
          checkOp(ctx, body, {t}, t, {uniform({3, 5}, -3, 3, 10 + axis)}));
    }
  }
}

struct ConvCase {
  Shape input, filter, output;
  const char *attrs;
};

TEST(NNGradients, Conv2D) {
  mlir::MLIRContext ctx;
  const ConvCase cases[] = {
      {{2, 5, 5, 3}, {3, 3, 3, 4}, {2, 3, 3, 4}, ""},
      {{2, 5, 5, 3},
       {3, 3, 3, 4},
       {2, 5, 5, 4},
       "{padding = #kc<padding same>}"},
      {{2, 5, 5, 3},
       {3, 3, 3, 4},
       {2, 3, 3, 4},
       "{padding = #kc<padding same>, strides = array<i64: 2, 2>}"},
      {{1, 6, 6, 2},
       {3, 3, 2, 2},
       {1, 3, 3, 2},
       "{padding = #kc<padding same>, strides = array<i64: 2, 2>}"},
      {{2, 5, 5, 3},
       {3, 3, 3, 4},
       {2, 2, 2, 4},
       "{strides = array<i64: 2, 2>}"},
      {{1, 7, 7, 2},
       {3, 3, 2, 3},
       {1, 3, 3, 3},
       "{dilations = array<i64: 2, 2>}"},
      {{1, 7, 7, 2},
       {3, 3, 2, 3},
       {1, 7, 7, 3},
       "{padding = #kc<padding same>, dilations = array<i64: 2, 2>}"},
      {{1, 6, 5, 2},
       {2, 3, 2, 2},
       {1, 3, 2, 2},
       "{padding = #kc<padding same>, strides = array<i64: 2, 3>}"},
      // Grouped and depthwise (groups = input channels, multiplier 2).
      {{2, 5, 5, 4}, {3, 3, 2, 6}, {2, 3, 3, 6}, "{groups = 2}"},
      {{1, 6, 6, 3},
       {3, 3, 1, 6},
       {1, 3, 3, 6},
       "{groups = 3, padding = #kc<padding same>, strides = array<i64: 2, "
       "2>}"},
      {{1, 7, 7, 4},
       {2, 2, 1, 4},
       {1, 5, 5, 4},
       "{groups = 4, dilations = array<i64: 2, 2>}"},
  };
  unsigned seed = 20;
  for (const ConvCase &c : cases) {
    std::string in = f64Tensor(c.input), w = f64Tensor(c.filter),
                out = f64Tensor(c.output);
    std::string body = std::string("  %y = kc.conv2d %x0, %x1 ") + c.attrs +
                       " : " + in + ", " + w + " -> " + out;
    SCOPED_TRACE(body);
    EXPECT_GRADIENTS_MATCH(checkOp(
        ctx, body, {in, w}, out,
        {uniform(c.input, -1, 1, seed), uniform(c.filter, -1, 1, seed + 1)}));
    seed += 2;
  }
}

/// conv2d_backprop_input is Conv2DTranspose's op: its own gradients (a
/// conv2d for grad_output, a conv2d_backprop_filter for the filter).
TEST(NNGradients, Conv2DBackpropInput) {
  mlir::MLIRContext ctx;
  // {grad_output, filter, result (the forward input)}.
  const ConvCase cases[] = {
      {{2, 3, 3, 4}, {3, 3, 3, 4}, {2, 5, 5, 3}, ""},
      {{1, 3, 3, 2},
       {3, 3, 2, 2},
       {1, 6, 6, 2},
       "{padding = #kc<padding same>, strides = array<i64: 2, 2>}"},
      {{1, 4, 3, 2},
       {3, 2, 3, 2},
       {1, 9, 4, 3},
       "{strides = array<i64: 2, 1>}"},
      {{1, 3, 3, 3},
       {2, 2, 3, 3},
       {1, 5, 5, 3},
       "{dilations = array<i64: 2, 2>}"},
      {{1, 3, 3, 4}, {3, 3, 2, 4}, {1, 5, 5, 4}, "{groups = 2}"},
  };
  unsigned seed = 60;
  for (const ConvCase &c : cases) {
    std::string dy = f64Tensor(c.input), w = f64Tensor(c.filter),
                out = f64Tensor(c.output);
    std::string body =
        std::string("  %y = kc.conv2d_backprop_input %x0, %x1 ") + c.attrs +
        " : " + dy + ", " + w + " -> " + out;
    SCOPED_TRACE(body);
    EXPECT_GRADIENTS_MATCH(checkOp(
        ctx, body, {dy, w}, out,
        {uniform(c.input, -1, 1, seed), uniform(c.filter, -1, 1, seed + 1)}));
    seed += 2;
  }
}

/// SeparableConv2D as the layer traces it: DepthwiseConv2D's kernel
/// [kh, kw, C, M] reshaped to a grouped filter, then a 1x1 convolution;
/// depth multipliers 2 and 1, strided same and dilated valid.
TEST(NNGradients, SeparableConvolution) {
  mlir::MLIRContext ctx;
  struct Case {
    Shape input, depthwise, pointwise, mid, output;
    const char *attrs;
  };
  const Case cases[] = {
      {{2, 6, 6, 3},
       {3, 3, 3, 2},
       {1, 1, 6, 4},
       {2, 3, 3, 6},
       {2, 3, 3, 4},
       "padding = #kc<padding same>, strides = array<i64: 2, 2>"},
      {{1, 7, 7, 2},
       {2, 2, 2, 1},
       {1, 1, 2, 3},
       {1, 5, 5, 2},
       {1, 5, 5, 3},
       "dilations = array<i64: 2, 2>"},
  };
  unsigned seed = 80;
  for (const Case &c : cases) {
    Shape grouped{c.depthwise[0], c.depthwise[1], 1,
                  c.depthwise[2] * c.depthwise[3]};
    std::string in = f64Tensor(c.input), dw = f64Tensor(c.depthwise),
                pw = f64Tensor(c.pointwise), mid = f64Tensor(c.mid),
                out = f64Tensor(c.output), g = f64Tensor(grouped);
    std::string body =
        "  %f = kc.reshape %x1 : " + dw + " -> " + g + "\n" +
        "  %d = kc.conv2d %x0, %f {groups = " + std::to_string(c.input[3]) +
        " : i64, " + c.attrs + "} : " + in + ", " + g + " -> " + mid + "\n" +
        "  %y = kc.conv2d %d, %x2 : " + mid + ", " + pw + " -> " + out;
    SCOPED_TRACE(body);
    EXPECT_GRADIENTS_MATCH(checkOp(ctx, body, {in, dw, pw}, out,
                                   {uniform(c.input, -1, 1, seed),
                                    uniform(c.depthwise, -1, 1, seed + 1),
                                    uniform(c.pointwise, -1, 1, seed + 2)}));
    seed += 3;
  }
}

struct PoolCase {
  Shape input, output;
  const char *attrs;
};

TEST(NNGradients, Pooling) {
  mlir::MLIRContext ctx;
  const PoolCase cases[] = {
      {{1, 4, 4, 2},
       {1, 2, 2, 2},
       "{window = array<i64: 2, 2>, strides = array<i64: 2, 2>}"},
      {{2, 5, 5, 2},
       {2, 2, 2, 2},
       "{window = array<i64: 3, 3>, strides = array<i64: 2, 2>}"},
      {{2, 5, 5, 2},
       {2, 3, 3, 2},
       "{window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = "
       "#kc<padding same>}"},
      {{1, 5, 4, 1},
       {1, 3, 2, 1},
       "{window = array<i64: 2, 2>, strides = array<i64: 2, 2>, padding = "
       "#kc<padding same>}"},
  };
  unsigned seed = 40;
  for (const char *op : {"max_pool2d", "avg_pool2d"}) {
    for (const PoolCase &c : cases) {
      std::string in = f64Tensor(c.input), out = f64Tensor(c.output);
      std::string body = std::string("  %y = kc.") + op + " %x0 " + c.attrs +
                         " : " + in + " -> " + out;
      SCOPED_TRACE(body);
      // Continuous random inputs: window maxima are unique.
      EXPECT_GRADIENTS_MATCH(
          checkOp(ctx, body, {in}, out, {uniform(c.input, -1, 1, seed++)}));
    }
  }
}

TEST(NNGradients, BatchMatmulAllTransposeCombinations) {
  mlir::MLIRContext ctx;
  const int64_t batch = 3, m = 2, k = 4, n = 5;
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      Shape a = ta ? Shape{batch, k, m} : Shape{batch, m, k};
      Shape b = tb ? Shape{batch, n, k} : Shape{batch, k, n};
      std::ostringstream body;
      body << "  %y = kc.batch_matmul %x0, %x1 {transpose_lhs = "
           << (ta ? "true" : "false")
           << ", transpose_rhs = " << (tb ? "true" : "false")
           << "} : " << f64Tensor(a) << ", " << f64Tensor(b) << " -> "
           << f64Tensor({batch, m, n});
      SCOPED_TRACE(body.str());
      EXPECT_GRADIENTS_MATCH(checkOp(ctx, body.str(),
                                     {f64Tensor(a), f64Tensor(b)},
                                     f64Tensor({batch, m, n}),
                                     {uniform(a, -1, 1, 31 + 2 * ta + tb),
                                      uniform(b, -1, 1, 35 + 2 * ta + tb)}));
    }
  }
}

TEST(NNGradients, BroadcastAddAndResidualFanOut) {
  // h = tanh(x w + b) + x: x feeds the matmul and the residual add, the
  // broadcast bias feeds every row, so gradients must be summed.
  mlir::MLIRContext ctx;
  std::string body = R"mlir(
  %xw = kc.matmul %x0, %x1 : tensor<4x3xf64>, tensor<3x3xf64> -> tensor<4x3xf64>
  %bb = kc.broadcast_to %x2 : tensor<3xf64> -> tensor<4x3xf64>
  %pre = kc.add %xw, %bb : tensor<4x3xf64>
  %act = kc.tanh %pre : tensor<4x3xf64>
  %y = kc.add %act, %x0 : tensor<4x3xf64>)mlir";
  EXPECT_GRADIENTS_MATCH(checkOp(
      ctx, body, {"tensor<4x3xf64>", "tensor<3x3xf64>", "tensor<3xf64>"},
      "tensor<4x3xf64>",
      {uniform({4, 3}, -1, 1, 60), uniform({3, 3}, -1, 1, 61),
       uniform({3}, -1, 1, 62)}));
}

TEST(NNGradients, SoftmaxCrossEntropyOfADenseLayer) {
  // loss = -mean_i sum_j one_hot(labels)_ij log_softmax(x w + b)_ij.
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<4x3xf64>, %w: tensor<3x5xf64>, %b: tensor<5xf64>,
                 %labels: tensor<4xi32>) -> tensor<f64> {
      %xw = kc.matmul %x, %w : tensor<4x3xf64>, tensor<3x5xf64> -> tensor<4x5xf64>
      %bb = kc.broadcast_to %b : tensor<5xf64> -> tensor<4x5xf64>
      %logits = kc.add %xw, %bb : tensor<4x5xf64>
      %logp = kc.log_softmax %logits : tensor<4x5xf64>
      %oh = kc.one_hot %labels : tensor<4xi32> -> tensor<4x5xf64>
      %picked = kc.mul %oh, %logp : tensor<4x5xf64>
      %nll = kc.reduce_sum %picked {axes = array<i64: 1>} : tensor<4x5xf64> -> tensor<4xf64>
      %mean = kc.reduce_mean %nll {axes = array<i64: 0>} : tensor<4xf64> -> tensor<f64>
      %loss = kc.neg %mean : tensor<f64>
      return %loss : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  NDArray labels = NDArray::zeros({4}, DType::I32);
  const int classes[] = {2, 0, 4, 2};
  for (int i = 0; i < 4; ++i)
    labels.set(i, classes[i]);
  EXPECT_GRADIENTS_MATCH(
      checkGradients(*module,
                     {uniform({4, 3}, -1, 1, 70), uniform({3, 5}, -1, 1, 71),
                      uniform({5}, -1, 1, 72), labels},
                     /*numWrt=*/3));
}

TEST(NNGradients, DropoutAsRandomCompareSelect) {
  // The frontend's dropout: keep where u >= rate, scale by 1 / (1 - rate).
  // The mask depends on the integer counter only: no gradient path.
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<4x6xf64>, %r: tensor<4x6xf64>, %step: tensor<i64>) -> tensor<f64> {
      %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<4x6xf64>
      %rate = kc.constant dense<0.5> : tensor<4x6xf64>
      %keep = kc.compare ge, %u, %rate : tensor<4x6xf64> -> tensor<4x6xi1>
      %two = kc.constant dense<2.0> : tensor<4x6xf64>
      %scaled = kc.mul %x, %two : tensor<4x6xf64>
      %zero = kc.constant dense<0.0> : tensor<4x6xf64>
      %d = kc.select %keep, %scaled, %zero : tensor<4x6xi1>, tensor<4x6xf64>
      %s = kc.sigmoid %d : tensor<4x6xf64>
      %p = kc.mul %s, %r : tensor<4x6xf64>
      %l = kc.reduce_sum %p {axes = array<i64: 0, 1>} : tensor<4x6xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  NDArray step = NDArray::zeros({}, DType::I64);
  step.set(0, 3);
  EXPECT_GRADIENTS_MATCH(checkGradients(
      *module, {uniform({4, 6}, -2, 2, 80), uniform({4, 6}, -1, 1, 81), step},
      1));
}

} // namespace
