//===- ShapeGradientsTest.cpp - gradient checks of layout and reductions --===//

#include "tests/unit/autodiff/GradCheck.h"

#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/Autodiff.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "gtest/gtest.h"

#include <sstream>

using namespace kcc;
using namespace kcc::test;

namespace {

/// Checks `%y = kc.<op> %x0 <attrs> : in -> out`.
GradCheckResult checkShapeOp(mlir::MLIRContext &ctx, const std::string &op,
                             const std::string &attrs, const Shape &in,
                             const Shape &out, unsigned seed) {
  std::string inT = f64Tensor(in), outT = f64Tensor(out);
  return checkOp(
      ctx, "  %y = kc." + op + " %x0 " + attrs + " : " + inT + " -> " + outT,
      {inT}, outT, {uniform(in, -2, 2, seed)});
}

TEST(ShapeGradients, Reshape) {
  mlir::MLIRContext ctx;
  EXPECT_GRADIENTS_MATCH(checkShapeOp(ctx, "reshape", "", {3, 4}, {2, 6}, 1));
  EXPECT_GRADIENTS_MATCH(
      checkShapeOp(ctx, "reshape", "", {2, 3, 4}, {4, 6}, 2));
}

TEST(ShapeGradients, Transpose) {
  mlir::MLIRContext ctx;
  EXPECT_GRADIENTS_MATCH(checkShapeOp(ctx, "transpose",
                                      "{perm = array<i64: 2, 0, 1>}", {2, 3, 4},
                                      {4, 2, 3}, 3));
  EXPECT_GRADIENTS_MATCH(checkShapeOp(
      ctx, "transpose", "{perm = array<i64: 1, 0>}", {3, 5}, {5, 3}, 4));
}

TEST(ShapeGradients, Concat) {
  mlir::MLIRContext ctx;
  std::string body = "  %y = kc.concat %x0, %x1, %x2 {axis = 1 : i64} : "
                     "(tensor<2x1xf64>, tensor<2x3xf64>, tensor<2x2xf64>) -> "
                     "tensor<2x6xf64>";
  EXPECT_GRADIENTS_MATCH(checkOp(
      ctx, body, {"tensor<2x1xf64>", "tensor<2x3xf64>", "tensor<2x2xf64>"},
      "tensor<2x6xf64>",
      {uniform({2, 1}, -2, 2, 5), uniform({2, 3}, -2, 2, 6),
       uniform({2, 2}, -2, 2, 7)}));
  std::string axis0 = "  %y = kc.concat %x0, %x1 {axis = 0 : i64} : "
                      "(tensor<1x3xf64>, tensor<2x3xf64>) -> tensor<3x3xf64>";
  EXPECT_GRADIENTS_MATCH(checkOp(
      ctx, axis0, {"tensor<1x3xf64>", "tensor<2x3xf64>"}, "tensor<3x3xf64>",
      {uniform({1, 3}, -2, 2, 8), uniform({2, 3}, -2, 2, 9)}));
}

TEST(ShapeGradients, Slice) {
  mlir::MLIRContext ctx;
  // Contiguous with offsets on both sides.
  EXPECT_GRADIENTS_MATCH(checkShapeOp(
      ctx, "slice",
      "{start = array<i64: 1, 2>, limit = array<i64: 4, 6>, strides = "
      "array<i64: 1, 1>}",
      {5, 7}, {3, 4}, 10));
  // Strided: zeros interleaved, leading and trailing zeros.
  EXPECT_GRADIENTS_MATCH(checkShapeOp(
      ctx, "slice",
      "{start = array<i64: 1, 0>, limit = array<i64: 5, 7>, strides = "
      "array<i64: 2, 3>}",
      {5, 7}, {2, 3}, 11));
  // 3-D, where the zeros after the last strided element overshoot the dim.
  EXPECT_GRADIENTS_MATCH(checkShapeOp(
      ctx, "slice",
      "{start = array<i64: 0, 1, 2>, limit = array<i64: 4, 6, 5>, strides = "
      "array<i64: 3, 2, 2>}",
      {4, 6, 5}, {2, 3, 2}, 12));
}

TEST(ShapeGradients, BroadcastTo) {
  mlir::MLIRContext ctx;
  EXPECT_GRADIENTS_MATCH(
      checkShapeOp(ctx, "broadcast_to", "", {3, 1}, {2, 3, 4}, 13));
  EXPECT_GRADIENTS_MATCH(
      checkShapeOp(ctx, "broadcast_to", "", {4}, {3, 4}, 14));
  EXPECT_GRADIENTS_MATCH(
      checkShapeOp(ctx, "broadcast_to", "", {1, 4}, {3, 4}, 15));
}

struct ReduceCase {
  std::vector<int64_t> axes;
  bool keepdims;
};

TEST(ShapeGradients, Reductions) {
  mlir::MLIRContext ctx;
  const Shape in = {2, 3, 4};
  const ReduceCase cases[] = {
      {{1}, false}, {{1}, true},        {{0, 2}, true},   {{0, 2}, false},
      {{2}, false}, {{0, 1, 2}, false}, {{0, 1, 2}, true}};
  unsigned seed = 16;
  for (const char *op : {"reduce_sum", "reduce_mean", "reduce_max"}) {
    for (const ReduceCase &c : cases) {
      Shape out;
      std::ostringstream attrs;
      attrs << "{axes = array<i64: ";
      for (size_t i = 0; i < c.axes.size(); ++i)
        attrs << (i ? ", " : "") << c.axes[i];
      attrs << ">, keepdims = " << (c.keepdims ? "true" : "false") << "}";
      for (int64_t d = 0; d < 3; ++d) {
        bool reduced = llvm::is_contained(c.axes, d);
        if (!reduced)
          out.push_back(in[d]);
        else if (c.keepdims)
          out.push_back(1);
      }
      SCOPED_TRACE(std::string(op) + " " + attrs.str());
      EXPECT_GRADIENTS_MATCH(
          checkShapeOp(ctx, op, attrs.str(), in, out, seed++));
    }
  }
}

TEST(ShapeGradients, ReduceMaxSplitsTiesEvenly) {
  // TF's rule: tied maxima share the gradient equally.
  mlir::MLIRContext ctx;
  auto module = parse(ctx, R"mlir(
    func.func @f(%x: tensor<2x3xf64>) -> tensor<f64> {
      %m = kc.reduce_max %x {axes = array<i64: 1>} : tensor<2x3xf64> -> tensor<2xf64>
      %l = kc.reduce_sum %m {axes = array<i64: 0>} : tensor<2xf64> -> tensor<f64>
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
  Interpreter interpreter;
  auto out = interpreter.run(
      f, {NDArray::fromVector({2, 3}, {1, 3, 3, 2, 2, 2}, DType::F64)});
  const double expected[] = {0, 0.5, 0.5, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_DOUBLE_EQ(out[0].at(i), expected[i]) << "element " << i;
}

} // namespace
