//===- StraightLineRewrite.cpp - Greedy rewrites, no region simplify ------===//

#include "codegen/pipeline/StraightLineRewrite.h"

#include "mlir/Transforms/Passes.h"

mlir::GreedyRewriteConfig kcc::straightLineRewriteConfig() {
  mlir::GreedyRewriteConfig config;
  config.enableRegionSimplification = mlir::GreedySimplifyRegionLevel::Disabled;
  return config;
}

std::unique_ptr<mlir::Pass> kcc::createStraightLineCanonicalizer() {
  return mlir::createCanonicalizerPass(straightLineRewriteConfig());
}
