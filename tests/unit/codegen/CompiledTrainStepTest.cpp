//===- CompiledTrainStepTest.cpp - A whole compiled @train_step -----------===//
//
// Builds @train_step for a small MLP with kcc's training pipeline, compiles
// it, and runs three steps compiled and interpreted side by side, carrying
// params, optimizer state and the iteration count as a runtime would. Loss,
// metric, every parameter and every state tensor must agree at each step.
//
//===----------------------------------------------------------------------===//

#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "ir/KcDialect.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace kcc;

namespace {

const char *kMlp = R"mlir(
func.func @forward(%w1: tensor<12x16x$T> {kc.name = "dense/kernel", kc.trainable = true},
                   %b1: tensor<16x$T> {kc.name = "dense/bias", kc.trainable = true},
                   %w2: tensor<16x5x$T> {kc.name = "dense_1/kernel", kc.trainable = true},
                   %b2: tensor<5x$T> {kc.name = "dense_1/bias", kc.trainable = true},
                   %x: tensor<8x12x$T> {kc.input = 0 : i64}) -> tensor<8x5x$T> {
  %0 = kc.matmul %x, %w1 : tensor<8x12x$T>, tensor<12x16x$T> -> tensor<8x16x$T>
  %1 = kc.broadcast_to %b1 : tensor<16x$T> -> tensor<8x16x$T>
  %2 = kc.add %0, %1 : tensor<8x16x$T>
  %3 = kc.relu %2 : tensor<8x16x$T>
  %4 = kc.matmul %3, %w2 : tensor<8x16x$T>, tensor<16x5x$T> -> tensor<8x5x$T>
  %5 = kc.broadcast_to %b2 : tensor<5x$T> -> tensor<8x5x$T>
  %6 = kc.add %4, %5 : tensor<8x5x$T>
  %7 = kc.softmax %6 : tensor<8x5x$T>
  return %7 : tensor<8x5x$T>
}
)mlir";

/// A residual block: h feeds both the next Dense and the Add, so its
/// gradient is the sum of two paths (fan-out through the backward pass).
const char *kResidual = R"mlir(
func.func @forward(%w1: tensor<12x16x$T> {kc.name = "dense/kernel", kc.trainable = true},
                   %b1: tensor<16x$T> {kc.name = "dense/bias", kc.trainable = true},
                   %w2: tensor<16x16x$T> {kc.name = "dense_1/kernel", kc.trainable = true},
                   %b2: tensor<16x$T> {kc.name = "dense_1/bias", kc.trainable = true},
                   %w3: tensor<16x5x$T> {kc.name = "dense_2/kernel", kc.trainable = true},
                   %b3: tensor<5x$T> {kc.name = "dense_2/bias", kc.trainable = true},
                   %x: tensor<8x12x$T> {kc.input = 0 : i64}) -> tensor<8x5x$T> {
  %0 = kc.matmul %x, %w1 : tensor<8x12x$T>, tensor<12x16x$T> -> tensor<8x16x$T>
  %1 = kc.broadcast_to %b1 : tensor<16x$T> -> tensor<8x16x$T>
  %2 = kc.add %0, %1 : tensor<8x16x$T>
  %h = kc.relu %2 : tensor<8x16x$T>
  %3 = kc.matmul %h, %w2 : tensor<8x16x$T>, tensor<16x16x$T> -> tensor<8x16x$T>
  %4 = kc.broadcast_to %b2 : tensor<16x$T> -> tensor<8x16x$T>
  %5 = kc.add %3, %4 : tensor<8x16x$T>
  %r = kc.relu %5 : tensor<8x16x$T>
  %s = kc.add %r, %h : tensor<8x16x$T>
  %6 = kc.matmul %s, %w3 : tensor<8x16x$T>, tensor<16x5x$T> -> tensor<8x5x$T>
  %7 = kc.broadcast_to %b3 : tensor<5x$T> -> tensor<8x5x$T>
  %8 = kc.add %6, %7 : tensor<8x5x$T>
  %9 = kc.softmax %8 : tensor<8x5x$T>
  return %9 : tensor<8x5x$T>
}
)mlir";

std::string withType(std::string text, const std::string &type) {
  for (size_t at = text.find("$T"); at != std::string::npos;
       at = text.find("$T", at + type.size()))
    text.replace(at, 2, type);
  return text;
}

NDArray randomLike(mlir::Type type, std::mt19937 &gen, double scale) {
  auto t = mlir::cast<mlir::RankedTensorType>(type);
  NDArray a = NDArray::empty(Shape(t.getShape().begin(), t.getShape().end()),
                             dtypeOf(t.getElementType()));
  std::uniform_real_distribution<double> dist(-scale, scale);
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, dist(gen));
  return a;
}

void expectClose(const NDArray &expected, const NDArray &actual, double tol,
                 const std::string &what) {
  ASSERT_EQ(expected.shape(), actual.shape()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.at(i), a = actual.at(i);
    ASSERT_LE(std::abs(e - a), tol * std::max(1.0, std::abs(e)))
        << what << " element " << i << ": interpreted " << e << ", compiled "
        << a;
  }
}

struct Case {
  std::string model, type, optimizer;
  double tol;
};

class CompiledTrainStep : public ::testing::TestWithParam<Case> {};

TEST_P(CompiledTrainStep, ThreeStepsMatchTheInterpreter) {
  const Case &c = GetParam();
  mlir::MLIRContext ctx;
  ctx.loadDialect<kc::KcDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(
      withType(c.model == "mlp" ? kMlp : kResidual, c.type), &ctx);
  ASSERT_TRUE(module);
  TrainingConfig config;
  config.optimizer.kind = llvm::cantFail(parseOptimizer(c.optimizer));
  config.metrics = {"accuracy"};
  mlir::PassManager pm(&ctx);
  buildTrainPipeline(pm, config);
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  std::optional<TrainStepLayout> layout = getTrainStepLayout(step);
  ASSERT_TRUE(layout);

  std::optional<CompiledFunction> compiled;
  try {
    compiled.emplace(CompiledFunction::compile(*module, "train_step"));
  } catch (const Error &e) {
    FAIL() << e.what();
  }

  // Arguments: params (random), optimizer state (zeros), iterations, lr,
  // x (random), labels (i32 classes).
  std::mt19937 gen(7);
  std::vector<NDArray> args;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto t = mlir::cast<mlir::RankedTensorType>(step.getArgument(i).getType());
    Shape shape(t.getShape().begin(), t.getShape().end());
    DType dt = dtypeOf(t.getElementType());
    if (i < layout->numParams || i == layout->firstInputArg())
      args.push_back(randomLike(t, gen, 0.5));
    else if (i == layout->iterationsArg())
      args.push_back(NDArray::scalar(0, DType::I64));
    else if (i == layout->learningRateArg())
      args.push_back(NDArray::scalar(0.05, dt));
    else if (i == layout->targetArg()) {
      NDArray y = NDArray::empty(shape, dt);
      for (int64_t k = 0; k < y.numel(); ++k)
        y.set(k, k % 5);
      args.push_back(y);
    } else {
      args.push_back(NDArray::zeros(shape, dt));
    }
  }

  Interpreter interpreter;
  std::vector<NDArray> interpArgs = args, compiledArgs = args;
  for (int s = 0; s < 3; ++s) {
    std::vector<NDArray> expected = interpreter.run(step, interpArgs);
    std::vector<NDArray> actual = compiled->run(compiledArgs);
    ASSERT_EQ(expected.size(), actual.size());
    for (size_t r = 0; r < expected.size(); ++r)
      expectClose(expected[r], actual[r], c.tol,
                  "step " + std::to_string(s) + " result " + std::to_string(r));
    // Carry params, state and iterations into the next step.
    auto carry = [&](std::vector<NDArray> &next, std::vector<NDArray> &res) {
      unsigned n = layout->numParams + layout->numOptimizerState;
      for (unsigned i = 0; i < n; ++i)
        next[i] = res[layout->firstParamResult() + i];
      next[layout->iterationsArg()] = res[layout->iterationsResult()];
    };
    carry(interpArgs, expected);
    carry(compiledArgs, actual);
  }
  EXPECT_EQ(compiledArgs[layout->iterationsArg()].at(0), 3);
  interpreter.clearConstantCache();
}

INSTANTIATE_TEST_SUITE_P(
    Models, CompiledTrainStep,
    ::testing::Values(Case{"mlp", "f64", "adam", 1e-9},
                      Case{"mlp", "f32", "sgd", 1e-5},
                      Case{"mlp", "f64", "rmsprop", 1e-9},
                      Case{"residual", "f64", "adam", 1e-9},
                      Case{"residual", "f32", "sgd", 1e-5}),
    [](const auto &info) {
      return info.param.model + "_" + info.param.type + "_" +
             info.param.optimizer;
    });

} // namespace
