//===- PoolBeforeActivationTest.cpp - relu after max pooling, same bits ---===//
//
// kc-pool-before-activation turns max_pool2d(relu(x)) into
// relu(max_pool2d(x)) in the forward before the training step is built. A
// Conv2D(relu) + MaxPooling2D + Dense classifier trained with and without
// it (the import pipeline, which runs it, or not) must give the same loss
// and the same updated parameters bit for bit: with windows whose maximum
// is negative (a negative bias), with overlapping padded windows, and with
// a NaN pixel, whose windows stay NaN and get no gradient either way.
//
//===----------------------------------------------------------------------===//

#include "TrainStepHarness.h"

#include <cmath>
#include <cstring>

using namespace kcc;
using namespace kcc::testing;

namespace {

/// `$W`, `$S`, `$P`: the pooling's window, strides and padding; `$H`: the
/// pooled size.
std::string model(int64_t window, int64_t stride, const char *padding,
                  int64_t pooled) {
  std::string ir = R"mlir(
func.func @forward(%w: tensor<3x3x2x4xf32> {kc.name = "conv2d/kernel", kc.trainable = true},
                   %b: tensor<4xf32> {kc.name = "conv2d/bias", kc.trainable = true},
                   %wd: tensor<$Fx3xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %bd: tensor<3xf32> {kc.name = "dense/bias", kc.trainable = true},
                   %x: tensor<2x8x8x2xf32> {kc.input = 0 : i64}) -> tensor<2x3xf32> {
  %c = kc.conv2d %x, %w : tensor<2x8x8x2xf32>, tensor<3x3x2x4xf32> -> tensor<2x6x6x4xf32>
  %bb = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x6x6x4xf32>
  %s = kc.add %c, %bb : tensor<2x6x6x4xf32>
  %h = kc.relu %s : tensor<2x6x6x4xf32>
  %p = kc.max_pool2d %h {window = array<i64: $W, $W>, strides = array<i64: $S, $S>, padding = #kc<padding $P>} : tensor<2x6x6x4xf32> -> tensor<2x$Hx$Hx4xf32>
  %f = kc.reshape %p : tensor<2x$Hx$Hx4xf32> -> tensor<2x$Fxf32>
  %z = kc.matmul %f, %wd : tensor<2x$Fxf32>, tensor<$Fx3xf32> -> tensor<2x3xf32>
  %bz = kc.broadcast_to %bd : tensor<3xf32> -> tensor<2x3xf32>
  %y = kc.add %z, %bz : tensor<2x3xf32>
  return %y : tensor<2x3xf32>
}
)mlir";
  auto replace = [&](const std::string &from, const std::string &to) {
    for (size_t at; (at = ir.find(from)) != std::string::npos;)
      ir.replace(at, from.size(), to);
  };
  replace("$W", std::to_string(window));
  replace("$S", std::to_string(stride));
  replace("$P", padding);
  replace("$H", std::to_string(pooled));
  replace("$F", std::to_string(pooled * pooled * 4));
  return ir;
}

/// Values of both signs, away from ties.
NDArray values(const Shape &shape, int64_t seed, double scale) {
  NDArray a = NDArray::zeros(shape, DType::F32);
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, scale * (((i * 37 + seed * 11) % 23) - 11.3) / 11.0);
  return a;
}

bool sameBits(const NDArray &a, const NDArray &b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    return false;
  const float *pa = a.data<float>(), *pb = b.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::isnan(pa[i]) ? !std::isnan(pb[i])
                          : std::memcmp(&pa[i], &pb[i], sizeof(float)))
      return false;
  return true;
}

/// Whether the training step pools relu's input (the swap happened).
bool poolsBeforeRelu(TrainStepRunner &r) {
  bool before = false;
  r.step.walk([&](kc::MaxPool2DOp pool) {
    before |= !pool.getX().getDefiningOp<kc::ReluOp>();
  });
  return before;
}

void expectSameTraining(const std::string &ir, bool nanPixel) {
  TrainStepRunner plain(ir, sgdConfig()), swapped(ir, sgdConfig(), true);
  ASSERT_TRUE(plain.ok() && swapped.ok());
  EXPECT_FALSE(poolsBeforeRelu(plain));
  EXPECT_TRUE(poolsBeforeRelu(swapped));
  int64_t features =
      mlir::cast<mlir::RankedTensorType>(plain.step.getArgument(2).getType())
          .getShape()[0];
  // A negative bias on channels 1 and 3 leaves whole windows below zero.
  NDArray bias = NDArray::fromVector({4}, {0.1, -2.0, 0.05, -1.5}, DType::F32);
  std::vector<NDArray> params = {values({3, 3, 2, 4}, 1, 0.5), bias,
                                 values({features, 3}, 2, 0.3),
                                 values({3}, 3, 0.1)};
  plain.params = params;
  swapped.params = params;
  NDArray x = values({2, 8, 8, 2}, 4, 1.0);
  if (nanPixel)
    x.set(((0 * 8 + 2) * 8 + 3) * 2 + 1, NAN);
  NDArray y = NDArray::fromVector({2}, {2, 0}, DType::I32);
  for (int step = 0; step < 2; ++step) {
    std::vector<double> a = plain.run(0.1, x, y), b = swapped.run(0.1, x, y);
    ASSERT_EQ(a.size(), b.size());
    EXPECT_EQ(std::isnan(a[0]), nanPixel);
    EXPECT_TRUE(std::isnan(a[0]) ? std::isnan(b[0]) : a[0] == b[0])
        << a[0] << " vs " << b[0];
    for (size_t i = 0; i < params.size(); ++i)
      EXPECT_TRUE(sameBits(plain.params[i], swapped.params[i]))
          << "param " << i << " after step " << step;
  }
}

TEST(PoolBeforeActivation, TiledWindowsTrainTheSame) {
  expectSameTraining(model(2, 2, "valid", 3), false);
}

TEST(PoolBeforeActivation, OverlappingPaddedWindowsTrainTheSame) {
  expectSameTraining(model(3, 2, "same", 3), false);
}

TEST(PoolBeforeActivation, NaNPixelTrainsTheSame) {
  expectSameTraining(model(2, 2, "valid", 3), true);
  expectSameTraining(model(3, 2, "same", 3), true);
}

} // namespace
