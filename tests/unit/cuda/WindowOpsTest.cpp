//===- WindowOpsTest.cpp - kc-cuda-lower-window-ops, checked on the CPU ---===//
//
// The GPU's convolutions and pooling are generated from the linalg that
// kc-cuda-lower-window-ops produces. The same linalg runs on the CPU through
// kc-cpu-pipeline, so the lowering's semantics (padding, strides,
// dilations, clipped windows, first-maximum routing) are checked here
// against the interpreter (oneDNN and the kernel library), no GPU needed.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"
#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace kcc;

namespace {

struct WindowCase {
  std::string name, body; ///< body: @f's text with $T for the element type
};

std::string withType(std::string text, const std::string &type) {
  for (size_t at = text.find("$T"); at != std::string::npos;
       at = text.find("$T", at + type.size()))
    text.replace(at, 2, type);
  return text;
}

class WindowOps
    : public ::testing::TestWithParam<std::tuple<WindowCase, std::string>> {};

TEST_P(WindowOps, GeneratedMatchesInterpreter) {
  const auto &[c, type] = GetParam();
  mlir::MLIRContext ctx;
  ctx.loadDialect<kc::KcDialect, mlir::func::FuncDialect>();
  std::string text = withType(c.body, type);
  auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  ASSERT_TRUE(module) << text;
  auto f = module->lookupSymbol<mlir::func::FuncOp>("f");

  // Seeded inputs; integers in the data make ties for max pooling likely.
  std::mt19937 gen(11);
  std::uniform_int_distribution<int> small(-3, 3);
  std::vector<NDArray> args;
  for (mlir::Type t : f.getArgumentTypes()) {
    auto rt = mlir::cast<mlir::RankedTensorType>(t);
    NDArray a =
        NDArray::empty(Shape(rt.getShape().begin(), rt.getShape().end()),
                       type == "f32" ? DType::F32 : DType::F64);
    for (int64_t i = 0; i < a.numel(); ++i)
      a.set(i, small(gen) * 0.5);
    args.push_back(a);
  }
  Interpreter interpreter;
  std::vector<NDArray> expected = interpreter.run(f, args);

  mlir::OwningOpRef<mlir::ModuleOp> lowered = module->clone();
  mlir::PassManager pm(&ctx);
  pm.addPass(createKcCudaLowerWindowOps());
  ASSERT_TRUE(mlir::succeeded(pm.run(*lowered)));
  bool anyKcWindowOp = false;
  lowered->walk([&](mlir::Operation *op) {
    if (mlir::isa<kc::Conv2DOp, kc::Conv2DBackpropInputOp,
                  kc::Conv2DBackpropFilterOp, kc::MaxPool2DOp, kc::AvgPool2DOp,
                  kc::MaxPool2DGradOp, kc::AvgPool2DGradOp>(op))
      anyKcWindowOp = true;
  });
  EXPECT_FALSE(anyKcWindowOp);

  std::vector<NDArray> actual;
  try {
    CompiledFunction fn = CompiledFunction::compile(*lowered, "f");
    actual = fn.run(args);
  } catch (const Error &e) {
    FAIL() << e.what();
  }
  ASSERT_EQ(expected.size(), actual.size());
  double tol = type == "f32" ? 1e-5 : 1e-12;
  for (size_t r = 0; r < expected.size(); ++r) {
    ASSERT_EQ(expected[r].shape(), actual[r].shape());
    for (int64_t i = 0; i < expected[r].numel(); ++i) {
      double e = expected[r].at(i), a = actual[r].at(i);
      ASSERT_LE(std::abs(e - a), tol * std::max(1.0, std::abs(e)))
          << c.name << " element " << i << ": interpreter " << e
          << ", generated " << a;
    }
  }
}

const WindowCase kCases[] = {
    {"conv_valid",
     R"(func.func @f(%x: tensor<2x7x6x3x$T>, %w: tensor<3x2x3x4x$T>) -> tensor<2x5x5x4x$T> {
  %y = kc.conv2d %x, %w : tensor<2x7x6x3x$T>, tensor<3x2x3x4x$T> -> tensor<2x5x5x4x$T>
  return %y : tensor<2x5x5x4x$T>
})"},
    {"conv_same_stride2",
     R"(func.func @f(%x: tensor<2x7x8x3x$T>, %w: tensor<3x3x3x4x$T>) -> tensor<2x4x4x4x$T> {
  %y = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x7x8x3x$T>, tensor<3x3x3x4x$T> -> tensor<2x4x4x4x$T>
  return %y : tensor<2x4x4x4x$T>
})"},
    {"conv_dilated",
     R"(func.func @f(%x: tensor<1x9x9x2x$T>, %w: tensor<3x3x2x3x$T>) -> tensor<1x5x5x3x$T> {
  %y = kc.conv2d %x, %w {dilations = array<i64: 2, 2>} : tensor<1x9x9x2x$T>, tensor<3x3x2x3x$T> -> tensor<1x5x5x3x$T>
  return %y : tensor<1x5x5x3x$T>
})"},
    {"conv_backprop_input_same_stride2",
     R"(func.func @f(%dy: tensor<2x4x4x4x$T>, %w: tensor<3x3x3x4x$T>) -> tensor<2x7x8x3x$T> {
  %dx = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x4x4x4x$T>, tensor<3x3x3x4x$T> -> tensor<2x7x8x3x$T>
  return %dx : tensor<2x7x8x3x$T>
})"},
    {"conv_backprop_input_valid",
     R"(func.func @f(%dy: tensor<2x5x5x4x$T>, %w: tensor<3x2x3x4x$T>) -> tensor<2x7x6x3x$T> {
  %dx = kc.conv2d_backprop_input %dy, %w : tensor<2x5x5x4x$T>, tensor<3x2x3x4x$T> -> tensor<2x7x6x3x$T>
  return %dx : tensor<2x7x6x3x$T>
})"},
    {"conv_backprop_filter_same_stride2",
     R"(func.func @f(%x: tensor<2x7x8x3x$T>, %dy: tensor<2x4x4x4x$T>) -> tensor<3x3x3x4x$T> {
  %dw = kc.conv2d_backprop_filter %x, %dy {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<2x7x8x3x$T>, tensor<2x4x4x4x$T> -> tensor<3x3x3x4x$T>
  return %dw : tensor<3x3x3x4x$T>
})"},
    {"max_pool_valid",
     R"(func.func @f(%x: tensor<2x6x6x3x$T>) -> tensor<2x3x3x3x$T> {
  %y = kc.max_pool2d %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x6x6x3x$T> -> tensor<2x3x3x3x$T>
  return %y : tensor<2x3x3x3x$T>
})"},
    {"max_pool_same_overlapping",
     R"(func.func @f(%x: tensor<2x7x6x3x$T>) -> tensor<2x4x3x3x$T> {
  %y = kc.max_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x7x6x3x$T> -> tensor<2x4x3x3x$T>
  return %y : tensor<2x4x3x3x$T>
})"},
    {"avg_pool_same_overlapping",
     R"(func.func @f(%x: tensor<2x7x6x3x$T>) -> tensor<2x4x3x3x$T> {
  %y = kc.avg_pool2d %x {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x7x6x3x$T> -> tensor<2x4x3x3x$T>
  return %y : tensor<2x4x3x3x$T>
})"},
    {"max_pool_grad_same_overlapping",
     R"(func.func @f(%x: tensor<2x7x6x3x$T>, %dy: tensor<2x4x3x3x$T>) -> tensor<2x7x6x3x$T> {
  %dx = kc.max_pool2d_grad %x, %dy {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x7x6x3x$T>, tensor<2x4x3x3x$T> -> tensor<2x7x6x3x$T>
  return %dx : tensor<2x7x6x3x$T>
})"},
    {"max_pool_grad_valid",
     R"(func.func @f(%x: tensor<2x6x6x3x$T>, %dy: tensor<2x3x3x3x$T>) -> tensor<2x6x6x3x$T> {
  %dx = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x6x6x3x$T>, tensor<2x3x3x3x$T> -> tensor<2x6x6x3x$T>
  return %dx : tensor<2x6x6x3x$T>
})"},
    {"avg_pool_grad_same_overlapping",
     R"(func.func @f(%dy: tensor<2x4x3x3x$T>) -> tensor<2x7x6x3x$T> {
  %dx = kc.avg_pool2d_grad %dy {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x4x3x3x$T> -> tensor<2x7x6x3x$T>
  return %dx : tensor<2x7x6x3x$T>
})"},
};

INSTANTIATE_TEST_SUITE_P(Cpu, WindowOps,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values("f32", "f64")),
                         [](const auto &info) {
                           return std::get<0>(info.param).name + "_" +
                                  std::get<1>(info.param);
                         });

} // namespace
