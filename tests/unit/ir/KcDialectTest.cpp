//===- KcDialectTest.cpp - building and verifying kc ops from C++ ---------===//

#include "ir/KcDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;

namespace {

class KcDialectTest : public ::testing::Test {
protected:
  KcDialectTest() { context.loadDialect<kcc::kc::KcDialect>(); }

  /// Verifies `op` and returns the first diagnostic (empty when valid).
  std::string verifyMessage(Operation *op) {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    (void)verify(op);
    return message;
  }

  MLIRContext context;
};

TEST_F(KcDialectTest, BuildsAndVerifiesMatmul) {
  OpBuilder b(&context);
  auto loc = b.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto f32 = b.getF32Type();
  auto x = b.create<kcc::kc::ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({4, 3}, f32), 1.0f));
  auto w = b.create<kcc::kc::ConstantOp>(
      loc, DenseElementsAttr::get(RankedTensorType::get({3, 2}, f32), 2.0f));
  auto good = b.create<kcc::kc::MatmulOp>(
      loc, RankedTensorType::get({4, 2}, f32), x, w);
  EXPECT_EQ(verifyMessage(good), "");
  // Transposing the rhs makes it 2x3: the contraction no longer matches.
  good.setTransposeRhs(true);
  EXPECT_EQ(verifyMessage(good),
            "'kc.matmul' op expects lhs columns (3) to match rhs rows (2): "
            "lhs [4, 3], rhs [3, 2] transposed");
  module.erase();
}

TEST_F(KcDialectTest, RoundTripsThroughText) {
  const char *text = R"mlir(
    func.func @f(%x: tensor<2x28x28x1xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<2x14x14x4xf32> {
      %y = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x28x28x1xf32>, tensor<3x3x1x4xf32> -> tensor<2x14x14x4xf32>
      %r = kc.relu %y : tensor<2x14x14x4xf32>
      return %r : tensor<2x14x14x4xf32>
    })mlir";
  context.loadDialect<func::FuncDialect>();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  // Printing then parsing again gives the same text.
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(printed, &context);
  ASSERT_TRUE(again);
  std::string reprinted;
  llvm::raw_string_ostream os2(reprinted);
  again->print(os2);
  EXPECT_EQ(printed, reprinted);
  EXPECT_NE(printed.find("padding = #kc<padding same>"), std::string::npos);
}

} // namespace
