//===- StraightLineRewrite.h - Greedy rewrites, no region simplify --------===//
//
// Until scf-to-cf, every region kcc's CPU pipeline holds is one block (the
// step's function, linalg and scf bodies), so the greedy driver's region
// simplification (unreachable blocks, region DCE, identical-block merging
// after every iteration) finds nothing and walks the whole step each time:
// 6% of the activations fixture's compile. Trivially dead ops are still
// erased, by the driver itself.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_PIPELINE_STRAIGHTLINEREWRITE_H
#define KCC_CODEGEN_PIPELINE_STRAIGHTLINEREWRITE_H

#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <memory>

namespace kcc {

/// The default greedy-rewrite config with region simplification off.
mlir::GreedyRewriteConfig straightLineRewriteConfig();

/// The canonicalizer with straightLineRewriteConfig().
std::unique_ptr<mlir::Pass> createStraightLineCanonicalizer();

} // namespace kcc

#endif // KCC_CODEGEN_PIPELINE_STRAIGHTLINEREWRITE_H
