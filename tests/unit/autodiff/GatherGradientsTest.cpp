//===- GatherGradientsTest.cpp - gradient check of gather (Embedding) -----===//

#include "tests/unit/autodiff/GradCheck.h"

#include "gtest/gtest.h"

using namespace kcc;
using namespace kcc::test;

namespace {

/// Repeated ids (their rows' gradients add), a negative id (counts from
/// the end) and ids outside [-V, V) (NaN rows, masked out of the loss
/// here by a select, no gradient) through a 3-D result.
TEST(GatherGradients, TableGradientScatterAddsRepeatedAndNegativeIds) {
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%table: tensor<5x3xf64>, %r: tensor<2x4x3xf64>,
                 %ids: tensor<2x4xi64>) -> tensor<f64> {
      %e = kc.gather %table, %ids : tensor<5x3xf64>, tensor<2x4xi64> -> tensor<2x4x3xf64>
      %t = kc.tanh %e : tensor<2x4x3xf64>
      %ok = kc.compare eq, %t, %t : tensor<2x4x3xf64> -> tensor<2x4x3xi1>
      %zero = kc.constant dense<0.0> : tensor<2x4x3xf64>
      %m = kc.select %ok, %t, %zero : tensor<2x4x3xi1>, tensor<2x4x3xf64>
      %p = kc.mul %m, %r : tensor<2x4x3xf64>
      %l = kc.reduce_sum %p {axes = array<i64: 0, 1, 2>} : tensor<2x4x3xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  NDArray ids =
      NDArray::fromVector({2, 4}, {1, 3, 1, -1, 0, 7, -6, 3}, DType::I64);
  EXPECT_GRADIENTS_MATCH(checkGradients(
      *module, {uniform({5, 3}, -1, 1, 80), uniform({2, 4, 3}, -1, 1, 81), ids},
      /*numWrt=*/1));
}

TEST(GatherGradients, Int32IdsThroughCheckOp) {
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%table: tensor<4x2xf64>, %ids: tensor<6xi32>) -> tensor<f64> {
      %e = kc.gather %table, %ids : tensor<4x2xf64>, tensor<6xi32> -> tensor<6x2xf64>
      %s = kc.mul %e, %e : tensor<6x2xf64>
      %l = kc.reduce_sum %s {axes = array<i64: 0, 1>} : tensor<6x2xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  NDArray ids = NDArray::fromVector({6}, {0, 0, 2, 3, 2, 0}, DType::I32);
  EXPECT_GRADIENTS_MATCH(
      checkGradients(*module, {uniform({4, 2}, -1, 1, 90), ids}, 1));
}

} // namespace
