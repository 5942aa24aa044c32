//===- AutodiffTest.cpp - the reverse sweep: errors, pruning, locations ---===//

#include "tests/unit/autodiff/GradCheck.h"

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace kcc;
using namespace kcc::test;

namespace {

/// Differentiates the loss @f returns w.r.t. the arguments `wrt`, replacing
/// the return with the gradients. Returns the diagnostics emitted.
std::string differentiate(func::FuncOp f, ArrayRef<unsigned> wrt, bool &ok) {
  std::string diagnostics;
  ScopedDiagnosticHandler handler(f.getContext(), [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  Operation *ret = f.getBody().front().getTerminator();
  OpBuilder b(ret);
  SmallVector<Value> args;
  for (unsigned i : wrt)
    args.push_back(f.getArgument(i));
  auto grads = buildGradients(b, ret->getOperand(0), args);
  ok = succeeded(grads);
  if (ok) {
    b.create<func::ReturnOp>(ret->getLoc(), *grads);
    ret->erase();
    f.setType(
        b.getFunctionType(f.getArgumentTypes(), ValueRange(*grads).getTypes()));
  }
  return diagnostics;
}

template <typename OpT> int count(func::FuncOp f) {
  int n = 0;
  f.walk([&](OpT) { ++n; });
  return n;
}

TEST(Autodiff, OpWithoutRuleOnThePathFails) {
  MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<1x4x4x1xf64>, %dy: tensor<1x2x2x1xf64>) -> tensor<f64> {
      %g = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x1xf64>, tensor<1x2x2x1xf64> -> tensor<1x4x4x1xf64>
      %l = kc.reduce_sum %g {axes = array<i64: 0, 1, 2, 3>} : tensor<1x4x4x1xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  int opsBefore = 0;
  f.walk([&](Operation *) { ++opsBefore; });
  bool ok = true;
  std::string message = differentiate(f, {0}, ok);
  EXPECT_FALSE(ok);
  EXPECT_EQ(message, "no gradient rule for 'kc.max_pool2d_grad'");
  // Nothing was built before the check failed.
  int opsAfter = 0;
  f.walk([&](Operation *) { ++opsAfter; });
  EXPECT_EQ(opsAfter, opsBefore);
}

TEST(Autodiff, ParameterOffTheLossPathGetsZerosAndNoCode) {
  // w2 feeds a dead matmul; x is input data. Only dW1 needs a matmul: no
  // gradient code for x or for the dead branch.
  MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%w1: tensor<3x2xf64>, %w2: tensor<3x2xf64>, %x: tensor<4x3xf64>) -> tensor<f64> {
      %h = kc.matmul %x, %w1 : tensor<4x3xf64>, tensor<3x2xf64> -> tensor<4x2xf64>
      %dead = kc.matmul %x, %w2 : tensor<4x3xf64>, tensor<3x2xf64> -> tensor<4x2xf64>
      %l = kc.reduce_sum %h {axes = array<i64: 0, 1>} : tensor<4x2xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  bool ok = false;
  differentiate(f, {0, 1}, ok);
  ASSERT_TRUE(ok);
  ASSERT_TRUE(succeeded(verify(*module)));
  EXPECT_EQ(count<kc::MatmulOp>(f), 3); // two forward, one for dW1
  // The whole backward pass: seed, reshape + broadcast of the reduce_sum
  // gradient, the dW1 matmul and w2's zeros.
  int backward = 0;
  bool afterLoss = false;
  for (Operation &op : f.getBody().front()) {
    if (afterLoss && !isa<func::ReturnOp>(op))
      ++backward;
    afterLoss |= isa<kc::ReduceSumOp>(op);
  }
  EXPECT_EQ(backward, 5);
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  auto zeros = ret.getOperand(1).getDefiningOp<kc::ConstantOp>();
  ASSERT_TRUE(zeros);
  auto attr = cast<DenseElementsAttr>(zeros.getValue());
  EXPECT_TRUE(attr.isSplat());
  EXPECT_EQ(attr.getSplatValue<double>(), 0.0);

  // dW1 = x^T 1: each row of dW1 is the column sum of x, computed here.
  NDArray x = uniform({4, 3}, -1, 1, 1);
  Interpreter interpreter;
  auto grads = interpreter.run(
      f, {uniform({3, 2}, -1, 1, 2), uniform({3, 2}, -1, 1, 3), x});
  for (int64_t i = 0; i < 3; ++i) {
    double columnSum = 0;
    for (int64_t r = 0; r < 4; ++r)
      columnSum += x.at(r * 3 + i);
    for (int64_t j = 0; j < 2; ++j)
      EXPECT_NEAR(grads[0].at(i * 2 + j), columnSum, 1e-12);
  }
  for (int64_t e = 0; e < 6; ++e)
    EXPECT_EQ(grads[1].at(e), 0.0);
}

TEST(Autodiff, GradientOpsCarryTheLayerName) {
  MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<2x3xf64>, %w: tensor<3x4xf64>) -> tensor<f64> {
      %h = kc.matmul %x, %w : tensor<2x3xf64>, tensor<3x4xf64> -> tensor<2x4xf64> loc("dense_1")
      %l = kc.reduce_sum %h {axes = array<i64: 0, 1>} : tensor<2x4xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  bool ok = false;
  differentiate(f, {1}, ok);
  ASSERT_TRUE(ok);
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  auto dw = ret.getOperand(0).getDefiningOp<kc::MatmulOp>();
  ASSERT_TRUE(dw);
  auto name = dyn_cast<NameLoc>(dw.getLoc());
  ASSERT_TRUE(name);
  EXPECT_EQ(name.getName().str(), "dense_1/grad");
}

TEST(Autodiff, FanOutIsSummed) {
  // loss = sum(x * x + x): d/dx = 2x + 1, with x used three times.
  MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<5xf64>) -> tensor<f64> {
      %sq = kc.mul %x, %x : tensor<5xf64>
      %s = kc.add %sq, %x : tensor<5xf64>
      %l = kc.reduce_sum %s {axes = array<i64: 0>} : tensor<5xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  bool ok = false;
  differentiate(f, {0}, ok);
  ASSERT_TRUE(ok);
  NDArray x = uniform({5}, -2, 2, 4);
  Interpreter interpreter;
  auto grads = interpreter.run(f, {x});
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_NEAR(grads[0].at(i), 2 * x.at(i) + 1, 1e-12);
}

TEST(Autodiff, GradientWithRespectToAnIntermediateValue) {
  // wrt = u, the result of an op without a rule (random_uniform): the sweep
  // stops at u. loss = sum(u * u * r) gives d/du = 2 u r.
  MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%step: tensor<i64>, %r: tensor<6xf64>) -> tensor<f64> {
      %u = kc.random_uniform %step {seed = 3 : i64} : tensor<i64> -> tensor<6xf64>
      %sq = kc.mul %u, %u : tensor<6xf64>
      %p = kc.mul %sq, %r : tensor<6xf64>
      %l = kc.reduce_sum %p {axes = array<i64: 0>} : tensor<6xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<func::FuncOp>("f");
  Operation *ret = f.getBody().front().getTerminator();
  Value u = f.getBody().front().front().getResult(0);
  OpBuilder b(ret);
  auto grads = buildGradients(b, ret->getOperand(0), u);
  ASSERT_TRUE(succeeded(grads));
  // Return u too, to compute the reference from the same draw.
  b.create<func::ReturnOp>(ret->getLoc(), ValueRange{(*grads)[0], u});
  ret->erase();
  f.setType(b.getFunctionType(f.getArgumentTypes(),
                              {(*grads)[0].getType(), u.getType()}));
  NDArray step = NDArray::zeros({}, DType::I64);
  NDArray r = uniform({6}, -1, 1, 5);
  Interpreter interpreter;
  auto out = interpreter.run(f, {step, r});
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_NEAR(out[0].at(i), 2 * out[1].at(i) * r.at(i), 1e-12);
}

} // namespace
