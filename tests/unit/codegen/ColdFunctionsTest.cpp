//===- ColdFunctionsTest.cpp - Unoptimized machine code, the same bits ----===//
//
// A train step of a deep MLP compiled with every function cold
// (kc-mark-cold-functions, its machine code emitted at
// CodeGenOptLevel::None in parts of its own) and with none: the lowered
// module does have cold functions and aot::splitModule cold parts, and two
// steps give bit for bit the same results either way.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/aot/SplitModule.h"
#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "gtest/gtest.h"

#include <cstring>
#include <limits>
#include <random>

using namespace kcc;

namespace {

constexpr int kLayers = 10;

/// kLayers Dense layers of 16 units (tanh), then 5 classes (softmax).
std::string deepMlp() {
  std::string s = "func.func @forward(";
  int in = 12;
  for (int l = 0; l <= kLayers; ++l) {
    int out = l == kLayers ? 5 : 16;
    std::string n = std::to_string(l);
    s += "%w" + n + ": tensor<" + std::to_string(in) + "x" +
         std::to_string(out) + "xf32> {kc.name = \"dense_" + n +
         "/kernel\", kc.trainable = true}, %b" + n + ": tensor<" +
         std::to_string(out) + "xf32> {kc.name = \"dense_" + n +
         "/bias\", kc.trainable = true}, ";
    in = out;
  }
  s += "%x: tensor<8x12xf32> {kc.input = 0 : i64}) -> tensor<8x5xf32> {\n";
  std::string h = "%x";
  in = 12;
  for (int l = 0; l <= kLayers; ++l) {
    int out = l == kLayers ? 5 : 16;
    std::string n = std::to_string(l);
    std::string a = "tensor<8x" + std::to_string(in) + "xf32>";
    std::string b = "tensor<8x" + std::to_string(out) + "xf32>";
    s += "  %m" + n + " = kc.matmul " + h + ", %w" + n + " : " + a +
         ", tensor<" + std::to_string(in) + "x" + std::to_string(out) +
         "xf32> -> " + b + "\n";
    s += "  %c" + n + " = kc.broadcast_to %b" + n + " : tensor<" +
         std::to_string(out) + "xf32> -> " + b + "\n";
    s += "  %s" + n + " = kc.add %m" + n + ", %c" + n + " : " + b + "\n";
    s += "  %h" + n + " = kc." +
         std::string(l == kLayers ? "softmax" : "tanh") + " %s" + n + " : " +
         b + "\n";
    h = "%h" + n;
    in = out;
  }
  s += "  return " + h + " : tensor<8x5xf32>\n}\n";
  return s;
}

CpuOptions optionsWithColdWork(int64_t work) {
  CpuOptions options;
  options.pipeline->coldWork = work;
  // Many small functions: several parts, cold ones among them.
  options.pipeline->kernelsPerFunction = 1;
  return options;
}

std::vector<NDArray> arguments(mlir::func::FuncOp step,
                               const TrainStepLayout &layout) {
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> dist(-0.5, 0.5);
  std::vector<NDArray> args;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    auto t = mlir::cast<mlir::RankedTensorType>(step.getArgument(i).getType());
    Shape shape(t.getShape().begin(), t.getShape().end());
    DType dt = dtypeOf(t.getElementType());
    NDArray a = NDArray::zeros(shape, dt);
    if (i < layout.numParams || i == layout.firstInputArg())
      for (int64_t k = 0; k < a.numel(); ++k)
        a.set(k, dist(gen));
    else if (i == layout.learningRateArg())
      a = NDArray::scalar(0.01, dt);
    else if (i == layout.targetArg())
      for (int64_t k = 0; k < a.numel(); ++k)
        a.set(k, k % 5);
    args.push_back(a);
  }
  return args;
}

TEST(ColdFunctions, UnoptimizedMachineCodeGivesTheSameBits) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<kc::KcDialect, mlir::func::FuncDialect>();
  auto module = mlir::parseSourceString<mlir::ModuleOp>(deepMlp(), &ctx);
  ASSERT_TRUE(module);
  TrainingConfig config;
  config.optimizer.kind = llvm::cantFail(parseOptimizer("adam"));
  mlir::PassManager pm(&ctx);
  buildTrainPipeline(pm, config);
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  ASSERT_TRUE(step);
  std::optional<TrainStepLayout> layout = getTrainStepLayout(step);
  ASSERT_TRUE(layout);

  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  // The lowered module has cold functions, and they get parts of their own.
  {
    mlir::OwningOpRef<mlir::ModuleOp> lowered = module->clone();
    ASSERT_TRUE(
        mlir::succeeded(lowerForCpu(*lowered, optionsWithColdWork(kAll))));
    int cold = 0;
    lowered->walk(
        [&](mlir::LLVM::LLVMFuncOp f) { cold += f->hasAttr(kc::attr::kCold); });
    EXPECT_GT(cold, kLayers);
    auto parts = aot::splitModule(*lowered);
    ASSERT_GE(parts.size(), 2u);
    for (auto &part : parts) {
      EXPECT_TRUE((*part)->hasAttr(aot::kColdAttrName));
      part->walk([&](mlir::LLVM::LLVMFuncOp f) {
        EXPECT_FALSE(f->hasAttr(kc::attr::kCold))
            << "@" << f.getSymName().str();
      });
    }
  }

  std::vector<std::vector<NDArray>> results;
  for (int64_t work : {int64_t(0), kAll}) {
    std::vector<NDArray> args = arguments(step, *layout);
    try {
      CompiledFunction f = CompiledFunction::compile(*module, "train_step",
                                                     optionsWithColdWork(work));
      for (int s = 0; s < 2; ++s) {
        std::vector<NDArray> res = f.run(args);
        unsigned n = layout->numParams + layout->numOptimizerState;
        for (unsigned i = 0; i < n; ++i)
          args[i] = res[layout->firstParamResult() + i];
        args[layout->iterationsArg()] = res[layout->iterationsResult()];
        if (s == 1)
          results.push_back(res);
      }
    } catch (const Error &e) {
      FAIL() << e.what();
    }
  }
  ASSERT_EQ(results[0].size(), results[1].size());
  for (size_t r = 0; r < results[0].size(); ++r) {
    const NDArray &hot = results[0][r], &cold = results[1][r];
    ASSERT_EQ(hot.shape(), cold.shape()) << "result " << r;
    ASSERT_EQ(hot.bytes(), cold.bytes()) << "result " << r;
    EXPECT_EQ(std::memcmp(hot.rawData(), cold.rawData(), hot.bytes()), 0)
        << "result " << r << " differs";
  }
}

} // namespace
