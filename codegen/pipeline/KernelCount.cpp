//===- KernelCount.cpp - Kernels a compiled step launches -----------------===//
//
// A step's kernel count is what its run time pays per-kernel costs for:
// library calls (oneDNN GEMM, convolution, pooling) plus top-level loop
// nests of generated code. kc-count-kernels records it on each function
// (`kc.kernels`, `kc.library_calls`, `kc.loop_nests`) while the loops are
// still structured ops, right before they become scf loops.
//
//===----------------------------------------------------------------------===//

#include "codegen/pipeline/KernelCount.h"
#include "codegen/Passes.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-count-kernels"

STATISTIC(numKernels, "kernels (library calls + top-level loop nests)");
STATISTIC(numLibraryCallKernels, "library-call kernels");
STATISTIC(numLoopNestKernels, "generated loop-nest kernels");

namespace kcc {
#define GEN_PASS_DEF_KCCOUNTKERNELS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

bool isLibraryCall(Operation *op) {
  StringRef callee;
  if (auto call = dyn_cast<func::CallOp>(op))
    callee = call.getCallee();
  else if (auto call = dyn_cast<LLVM::CallOp>(op))
    callee = call.getCallee().value_or("");
  return callee.starts_with(codegen::kLibraryCallPrefix);
}

bool isLoopNest(Operation *op) {
  return isa<linalg::LinalgOp, scf::ForOp, scf::ParallelOp, scf::ForallOp,
             affine::AffineForOp, affine::AffineParallelOp, memref::CopyOp>(op);
}

} // namespace

KernelCount kcc::countKernels(Operation *func) {
  KernelCount count;
  if (func->getNumRegions() == 0 || func->getRegion(0).empty())
    return count;
  // Top level only: a loop inside a loop nest is part of that kernel.
  for (Block &block : func->getRegion(0))
    for (Operation &op : block) {
      if (isLibraryCall(&op))
        ++count.libraryCalls;
      else if (isLoopNest(&op))
        ++count.loopNests;
      else if (auto call = dyn_cast<func::CallOp>(op)) {
        // A function of the module (a generated recurrence, shared by the
        // calls that run the same code): its kernels, at each call.
        auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
            call, call.getCalleeAttr());
        if (callee && !callee.isExternal() && callee != func) {
          KernelCount inner = countKernels(callee);
          count.libraryCalls += inner.libraryCalls;
          count.loopNests += inner.loopNests;
        }
      }
    }
  return count;
}

KernelCount kcc::countKernels(ModuleOp module, StringRef funcName) {
  if (auto func = module.lookupSymbol<func::FuncOp>(funcName))
    return countKernels(func);
  return {};
}

std::optional<KernelCount> kcc::readKernelCount(Operation *func) {
  std::optional<int64_t> lib = kc::getCount(func, kc::attr::kLibraryCalls);
  std::optional<int64_t> loops = kc::getCount(func, kc::attr::kLoopNests);
  if (!lib || !loops)
    return std::nullopt;
  return KernelCount{*lib, *loops};
}

namespace {

struct KcCountKernelsPass
    : public kcc::impl::KcCountKernelsBase<KcCountKernelsPass> {
  using KcCountKernelsBase::KcCountKernelsBase;

  void runOnOperation() override {
    Builder b(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      KernelCount c = countKernels(func);
      kc::setCount(func, kc::attr::kKernels, c.total());
      kc::setCount(func, kc::attr::kLibraryCalls, c.libraryCalls);
      kc::setCount(func, kc::attr::kLoopNests, c.loopNests);
      // Private functions (generated recurrences) are counted at their
      // calls.
      if (func.isPrivate())
        continue;
      numKernels += c.total();
      numLibraryCallKernels += c.libraryCalls;
      numLoopNestKernels += c.loopNests;
      if (remarks)
        func.emitRemark() << c.total() << " kernels: " << c.libraryCalls
                          << " library calls, " << c.loopNests << " loop nests";
    }
  }
};

} // namespace
