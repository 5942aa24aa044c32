//===- TraceTest.cpp - traceForward: signature, attributes, locations -----===//

#include "frontend/models/ReferenceModels.h"
#include "ir/KcAttributes.h"
#include "ir/KcDialect.h"
#include "kcc/kcc.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <set>

using namespace kcc;

namespace {

mlir::func::FuncOp forwardOf(mlir::ModuleOp module) {
  return module.lookupSymbol<mlir::func::FuncOp>("forward");
}

std::set<std::string> layerLocations(mlir::func::FuncOp func) {
  std::set<std::string> names;
  func.walk([&](mlir::Operation *op) {
    if (auto loc = mlir::dyn_cast<mlir::NameLoc>(op->getLoc()))
      names.insert(loc.getName().str());
  });
  return names;
}

TEST(Trace, MlpSignatureAndArgAttributes) {
  mlir::MLIRContext ctx;
  auto model = models::buildMlp(1);
  auto module = traceForward(ctx, *model, {/*batch=*/8});
  mlir::func::FuncOp f = forwardOf(*module);
  ASSERT_TRUE(f);
  std::vector<Parameter> params = model->parameters();
  ASSERT_EQ(params.size(), 6u);
  ASSERT_EQ(f.getNumArguments(), 7u);
  for (size_t i = 0; i < params.size(); ++i) {
    std::optional<llvm::StringRef> name = kc::getArgName(f, i);
    ASSERT_TRUE(name);
    EXPECT_EQ(name->str(), params[i].name);
    EXPECT_TRUE(kc::isTrainableArg(f, i));
    auto type = mlir::cast<mlir::RankedTensorType>(f.getArgument(i).getType());
    EXPECT_EQ(Shape(type.getShape().begin(), type.getShape().end()),
              params[i].value.shape());
  }
  EXPECT_EQ(params[0].name, "dense/kernel");
  EXPECT_EQ(kc::getInputIndex(f, 6), 0);
  auto inType = mlir::cast<mlir::RankedTensorType>(f.getArgument(6).getType());
  EXPECT_EQ(inType.getShape(), llvm::ArrayRef<int64_t>({8, 28, 28, 1}));
  ASSERT_EQ(f.getNumResults(), 1u);
  auto outType = mlir::cast<mlir::RankedTensorType>(f.getResultTypes()[0]);
  EXPECT_EQ(outType.getShape(), llvm::ArrayRef<int64_t>({8, 10}));
}

TEST(Trace, LayerNamesAreLocations) {
  mlir::MLIRContext ctx;
  auto model = models::buildCnn(2);
  auto module = traceForward(ctx, *model, {4});
  std::set<std::string> names = layerLocations(forwardOf(*module));
  for (const char *layer : {"conv2d", "max_pooling2d", "conv2d_1",
                            "max_pooling2d_1", "flatten", "dense", "dense_1"})
    EXPECT_TRUE(names.count(layer)) << layer;
  // Dense is matmul + broadcast bias + add + relu, all under its name.
  int denseOps = 0;
  forwardOf(*module).walk([&](mlir::Operation *op) {
    if (auto loc = mlir::dyn_cast<mlir::NameLoc>(op->getLoc()))
      if (loc.getName() == "dense")
        ++denseOps;
  });
  EXPECT_EQ(denseOps, 4);

  // The printed IR carries them too (what users see in dumps).
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  EXPECT_NE(os.str().find("loc(\"conv2d_1\")"), std::string::npos);
}

TEST(Trace, ResidualAddAndOpCounts) {
  mlir::MLIRContext ctx;
  auto model = models::buildResidual(3);
  auto module = traceForward(ctx, *model, {2});
  int adds = 0, matmuls = 0, reshapes = 0;
  forwardOf(*module).walk([&](mlir::Operation *op) {
    adds += mlir::isa<kc::AddOp>(op);
    matmuls += mlir::isa<kc::MatmulOp>(op);
    reshapes += mlir::isa<kc::ReshapeOp>(op);
  });
  EXPECT_EQ(matmuls, 4);
  EXPECT_EQ(adds, 5); // 4 bias adds + the residual Add
  EXPECT_EQ(reshapes, 1);
  EXPECT_TRUE(layerLocations(forwardOf(*module)).count("add"));
}

TEST(Trace, StepArgumentOnlyWhenTrainingWithDropout) {
  mlir::MLIRContext ctx;
  Sequential m({Input({16}), Dense(8, "relu"), Dropout(0.5), Dense(2)}, "d", 4);
  auto eval = traceForward(ctx, m, {3, /*training=*/false});
  EXPECT_EQ(forwardOf(*eval).getNumArguments(), 5u);
  int randoms = 0;
  forwardOf(*eval).walk([&](kc::RandomUniformOp) { ++randoms; });
  EXPECT_EQ(randoms, 0);

  auto train = traceForward(ctx, m, {3, /*training=*/true});
  mlir::func::FuncOp f = forwardOf(*train);
  ASSERT_EQ(f.getNumArguments(), 6u);
  EXPECT_TRUE(kc::isStepArg(f, 5));
  auto stepType =
      mlir::cast<mlir::RankedTensorType>(f.getArgument(5).getType());
  EXPECT_EQ(stepType.getRank(), 0);
  EXPECT_TRUE(stepType.getElementType().isInteger(64));
  f.walk([&](kc::RandomUniformOp op) {
    ++randoms;
    EXPECT_EQ(op.getCounter(), f.getArgument(5));
  });
  EXPECT_EQ(randoms, 1);

  // Without Dropout, training adds no step argument.
  auto mlp = models::buildMlp(1);
  EXPECT_EQ(forwardOf(*traceForward(ctx, *mlp, {2, true})).getNumArguments(),
            7u);
}

TEST(Trace, UnbuildableModelsThrow) {
  mlir::MLIRContext ctx;
  Sequential deferred({Dense(4)});
  EXPECT_THROW(traceForward(ctx, deferred, {2}), Error);
  auto mlp = models::buildMlp(1);
  EXPECT_THROW(traceForward(ctx, *mlp, {0}), Error);
}

} // namespace
