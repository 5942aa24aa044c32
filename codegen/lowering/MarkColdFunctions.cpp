//===- MarkColdFunctions.cpp - Functions not worth optimized machine code -===//
//
// kc-mark-cold-functions: after kc-outline-kernels, a function whose one
// call executes fewer than `work` operations (each counted once per
// iteration of the static loops around it) is marked kc.cold. Its machine
// code is then emitted at CodeGenOptLevel::None (aot::splitModule, the part
// compiler): for a kernel that runs a few thousand operations the
// optimizing instruction selector and register allocator cost more compile
// time than the code would ever save.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include "llvm/ADT/Statistic.h"

#include <limits>
#include <optional>

#define DEBUG_TYPE "kc-mark-cold-functions"

STATISTIC(numCold, "functions marked kc.cold");

namespace kcc {
#define GEN_PASS_DEF_KCMARKCOLDFUNCTIONS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

int64_t saturatingMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0)
    return 0;
  return a > kUnbounded / b ? kUnbounded : a * b;
}

int64_t saturatingAdd(int64_t a, int64_t b) {
  return a > kUnbounded - b ? kUnbounded : a + b;
}

/// Iterations of one loop dimension, when its bounds are constants.
std::optional<int64_t> tripCount(Value lower, Value upper, Value step) {
  std::optional<int64_t> lb = getConstantIntValue(lower);
  std::optional<int64_t> ub = getConstantIntValue(upper);
  std::optional<int64_t> st = getConstantIntValue(step);
  if (!lb || !ub || !st || *st <= 0)
    return std::nullopt;
  return *ub <= *lb ? 0 : (*ub - *lb + *st - 1) / *st;
}

/// How many times `op`'s regions run per run of `op`: a loop's trip count,
/// 1 for any other op with regions (both branches of an scf.if count),
/// kUnbounded when it is not known.
int64_t timesRegionsRun(Operation &op) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())
        .value_or(kUnbounded);
  if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    int64_t n = 1;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> count = tripCount(lb, ub, step);
      if (!count)
        return kUnbounded;
      n = saturatingMul(n, *count);
    }
    return n;
  }
  if (isa<scf::WhileOp>(op))
    return kUnbounded;
  return 1;
}

/// Operations `region` executes when it runs `times` times, stopping once
/// `bound` is reached.
int64_t work(Region &region, int64_t times, int64_t bound) {
  int64_t total = 0;
  for (Block &block : region)
    for (Operation &op : block) {
      total = saturatingAdd(total, times);
      if (op.getNumRegions() > 0) {
        int64_t inner = saturatingMul(times, timesRegionsRun(op));
        for (Region &r : op.getRegions())
          total = saturatingAdd(total, work(r, inner, bound));
      }
      if (total >= bound)
        return total;
    }
  return total;
}

struct KcMarkColdFunctionsPass
    : public kcc::impl::KcMarkColdFunctionsBase<KcMarkColdFunctionsPass> {
  using KcMarkColdFunctionsBase::KcMarkColdFunctionsBase;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (work <= 0 || func.isExternal())
      return;
    if (::work(func.getBody(), 1, work) >= work)
      return;
    func->setAttr(kcc::kc::attr::kCold, UnitAttr::get(func.getContext()));
    ++numCold;
  }
};

} // namespace
