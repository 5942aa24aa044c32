//===- ElementwiseGradientsTest.cpp - gradient checks of elementwise ops --===//
//
// Every differentiable elementwise op against central differences in f64,
// through the loss sum(op(x..) * R). Inputs avoid kinks (0 for relu and
// abs, ties for max and min) and the domains of log, sqrt, rsqrt, pow.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/autodiff/GradCheck.h"

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "gtest/gtest.h"

using namespace kcc;
using namespace kcc::test;

namespace {

const std::string kT = "tensor<3x4xf64>";
const Shape kShape = {3, 4};

GradCheckResult checkBinary(mlir::MLIRContext &ctx, const std::string &op,
                            const NDArray &lhs, const NDArray &rhs) {
  return checkOp(ctx, "  %y = kc." + op + " %x0, %x1 : " + kT, {kT, kT}, kT,
                 {lhs, rhs});
}

GradCheckResult checkUnary(mlir::MLIRContext &ctx, const std::string &op,
                           const NDArray &x, const std::string &attrs = "") {
  return checkOp(ctx, "  %y = kc." + op + " %x0 " + attrs + " : " + kT, {kT},
                 kT, {x});
}

/// `base` plus an offset of at least 0.1 in magnitude: no ties with base.
NDArray apart(const NDArray &base, unsigned seed) {
  NDArray offset = awayFromZero(base.shape(), 0.1, 1.0, seed);
  NDArray out = base.clone();
  for (int64_t i = 0; i < out.numel(); ++i)
    out.set(i, base.at(i) + offset.at(i));
  return out;
}

TEST(ElementwiseGradients, AddSubMulDiv) {
  mlir::MLIRContext ctx;
  NDArray a = uniform(kShape, -2, 2, 1), b = uniform(kShape, -2, 2, 2);
  EXPECT_GRADIENTS_MATCH(checkBinary(ctx, "add", a, b));
  EXPECT_GRADIENTS_MATCH(checkBinary(ctx, "sub", a, b));
  EXPECT_GRADIENTS_MATCH(checkBinary(ctx, "mul", a, b));
  EXPECT_GRADIENTS_MATCH(
      checkBinary(ctx, "div", a, awayFromZero(kShape, 0.5, 2, 3)));
}

TEST(ElementwiseGradients, Pow) {
  mlir::MLIRContext ctx;
  EXPECT_GRADIENTS_MATCH(checkBinary(ctx, "pow", uniform(kShape, 0.5, 2, 4),
                                     uniform(kShape, -2, 2, 5)));
}

TEST(ElementwiseGradients, MaxMin) {
  mlir::MLIRContext ctx;
  NDArray a = uniform(kShape, -2, 2, 6);
  NDArray b = apart(a, 7);
  EXPECT_GRADIENTS_MATCH(checkBinary(ctx, "max", a, b));
  EXPECT_GRADIENTS_MATCH(checkBinary(ctx, "min", a, b));
}

TEST(ElementwiseGradients, SmoothUnary) {
  mlir::MLIRContext ctx;
  NDArray x = uniform(kShape, -2, 2, 8);
  NDArray positive = uniform(kShape, 0.3, 3, 9);
  for (const char *op : {"neg", "exp", "sigmoid", "tanh"}) {
    SCOPED_TRACE(op);
    EXPECT_GRADIENTS_MATCH(checkUnary(ctx, op, x));
  }
  for (const char *op : {"log", "sqrt", "rsqrt"}) {
    SCOPED_TRACE(op);
    EXPECT_GRADIENTS_MATCH(checkUnary(ctx, op, positive));
  }
}

TEST(ElementwiseGradients, KinkedUnaryAwayFromZero) {
  mlir::MLIRContext ctx;
  NDArray x = awayFromZero(kShape, 0.1, 2, 10);
  EXPECT_GRADIENTS_MATCH(checkUnary(ctx, "abs", x));
  EXPECT_GRADIENTS_MATCH(checkUnary(ctx, "relu", x));
}

TEST(ElementwiseGradients, Gelu) {
  mlir::MLIRContext ctx;
  // Wide values plus ones near 0, where the exact rule switches from
  // y / x to its series (|x| < 1e-3).
  NDArray x = uniform(kShape, -4, 4, 11);
  const double nearZero[] = {0.0, 1e-4, -5e-4, 9.9e-4, -2e-3};
  for (int i = 0; i < 5; ++i)
    x.set(i, nearZero[i]);
  EXPECT_GRADIENTS_MATCH(checkUnary(ctx, "gelu", x));
  EXPECT_GRADIENTS_MATCH(checkUnary(ctx, "gelu", x, "{approximate = true}"));
}

TEST(ElementwiseGradients, SelectRoutesToTheChosenBranch) {
  mlir::MLIRContext ctx;
  std::string body =
      "  %c = kc.constant dense<[[true, false, true, true], [false, false, "
      "true, false], [true, true, false, true]]> : tensor<3x4xi1>\n"
      "  %y = kc.select %c, %x0, %x1 : tensor<3x4xi1>, " +
      kT;
  EXPECT_GRADIENTS_MATCH(
      checkOp(ctx, body, {kT, kT}, kT,
              {uniform(kShape, -2, 2, 12), uniform(kShape, -2, 2, 13)}));
}

TEST(ElementwiseGradients, ReluWrittenAsCompareAndSelect) {
  // The mask depends on x through an i1 compare: not a gradient path.
  mlir::MLIRContext ctx;
  std::string body = "  %z = kc.constant dense<0.0> : " + kT +
                     "\n"
                     "  %m = kc.compare gt, %x0, %z : " +
                     kT +
                     " -> tensor<3x4xi1>\n"
                     "  %y = kc.select %m, %x0, %z : tensor<3x4xi1>, " +
                     kT;
  EXPECT_GRADIENTS_MATCH(
      checkOp(ctx, body, {kT}, kT, {awayFromZero(kShape, 0.1, 2, 14)}));
}

TEST(ElementwiseGradients, CastGradientIsCastBack) {
  // loss = sum(cast(x : f32 -> f64) * r) is linear in x with coefficients
  // r, so d loss / dx is r rounded to f32.
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<5xf32>, %r: tensor<5xf64>) -> tensor<f64> {
      %c = kc.cast %x : tensor<5xf32> -> tensor<5xf64>
      %p = kc.mul %c, %r : tensor<5xf64>
      %l = kc.reduce_sum %p {axes = array<i64: 0>} : tensor<5xf64> -> tensor<f64>
      return %l : tensor<f64>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  mlir::Operation *ret = f.getBody().front().getTerminator();
  mlir::OpBuilder b(ret);
  auto grads = buildGradients(b, ret->getOperand(0), f.getArgument(0));
  ASSERT_TRUE(mlir::succeeded(grads));
  b.create<mlir::func::ReturnOp>(ret->getLoc(), *grads);
  ret->erase();
  f.setType(b.getFunctionType(f.getArgumentTypes(), (*grads)[0].getType()));
  NDArray r = uniform({5}, -1, 1, 15);
  Interpreter interpreter;
  auto out = interpreter.run(f, {uniform({5}, -1, 1, 16).to(DType::F32), r});
  ASSERT_EQ(out[0].dtype(), DType::F32);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(out[0].at(i), static_cast<double>(static_cast<float>(r.at(i))));
}

TEST(ElementwiseGradients, BF16CastGradientIsF32) {
  // Mixed precision: an f32 variable read as bf16, a bf16 product and sum,
  // the loss cast to f32. loss = sum(bf16(x) * r) has d loss / dx = r, and
  // the gradient of the f32 variable is f32 (the cast's gradient casts it
  // back); r is a bf16 value, so it comes back exactly.
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<5xf32>, %r: tensor<5xbf16>) -> tensor<f32> {
      %c = kc.cast %x : tensor<5xf32> -> tensor<5xbf16>
      %p = kc.mul %c, %r : tensor<5xbf16>
      %s = kc.reduce_sum %p {axes = array<i64: 0>} : tensor<5xbf16> -> tensor<bf16>
      %l = kc.cast %s : tensor<bf16> -> tensor<f32>
      return %l : tensor<f32>
    })mlir");
  ASSERT_TRUE(module);
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");
  mlir::Operation *ret = f.getBody().front().getTerminator();
  mlir::OpBuilder b(ret);
  auto grads = buildGradients(b, ret->getOperand(0), f.getArgument(0));
  ASSERT_TRUE(mlir::succeeded(grads));
  ASSERT_TRUE((*grads)[0].getType() == f.getArgument(0).getType());
  b.create<mlir::func::ReturnOp>(ret->getLoc(), *grads);
  ret->erase();
  f.setType(b.getFunctionType(f.getArgumentTypes(), (*grads)[0].getType()));
  NDArray r = uniform({5}, -1, 1, 17).to(DType::BF16);
  Interpreter interpreter;
  auto out = interpreter.run(f, {uniform({5}, -1, 1, 18).to(DType::F32), r});
  ASSERT_EQ(out[0].dtype(), DType::F32);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_EQ(out[0].at(i), r.at(i));
}

} // namespace
