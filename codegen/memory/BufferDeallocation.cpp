//===- BufferDeallocation.cpp - The kc-buffer-deallocation pass -----------===//
//
// MLIR's buffer-deallocation pipeline only where it has work to do: with the
// arena of kc-plan-memory nothing is allocated, and what is left is usually
// a few top-level buffers of straight-line functions, freed here before the
// return (see Passes.td).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"

namespace kcc {
#define GEN_PASS_DEF_KCBUFFERDEALLOCATION
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

struct KcBufferDeallocationPass
    : public kcc::impl::KcBufferDeallocationBase<KcBufferDeallocationPass> {
  KcBufferDeallocationPass() {
    bufferization::BufferDeallocationPipelineOptions options;
    bufferization::buildBufferDeallocationPipeline(pipeline, options);
  }
  KcBufferDeallocationPass(const KcBufferDeallocationPass &other)
      : KcBufferDeallocationBase(other), pipeline(other.pipeline) {}

  void getDependentDialects(DialectRegistry &registry) const override {
    KcBufferDeallocationBase::getDependentDialects(registry);
    pipeline.getDependentDialects(registry);
  }

  /// An allocation at the top of a one-block function that ends in a return.
  static bool isTopLevel(memref::AllocOp alloc) {
    auto func = llvm::dyn_cast<func::FuncOp>(alloc->getParentOp());
    return func && func.getBody().hasOneBlock() &&
           llvm::isa<func::ReturnOp>(func.getBody().front().getTerminator());
  }

  void runOnOperation() override {
    auto isMemRef = llvm::IsaPred<BaseMemRefType>;
    // What the pipeline has to handle: an allocation other than a
    // top-level one, or a buffer whose ownership moves (a returned memref, a
    // memref result of a call, of a region op or of an op of unknown
    // effects). Nothing at all: nothing to do.
    SmallVector<memref::AllocOp> topLevel;
    bool complex = false;
    getOperation()->walk([&](Operation *op) {
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
        if (!effects.hasEffect<MemoryEffects::Allocate>())
          return WalkResult::advance();
        auto alloc = dyn_cast<memref::AllocOp>(op);
        if (alloc && isTopLevel(alloc)) {
          topLevel.push_back(alloc);
          return WalkResult::advance();
        }
        complex = true;
        return WalkResult::interrupt();
      }
      if (isa<func::ReturnOp>(op)
              ? llvm::any_of(op->getOperandTypes(), isMemRef)
              : llvm::any_of(op->getResultTypes(), isMemRef)) {
        complex = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (complex) {
      if (failed(runPipeline(pipeline, getOperation())))
        signalPassFailure();
      return;
    }
    if (topLevel.empty())
      return markAllAnalysesPreserved();
    for (memref::AllocOp alloc : topLevel) {
      OpBuilder b(alloc->getBlock()->getTerminator());
      b.create<memref::DeallocOp>(alloc.getLoc(), alloc.getResult());
    }
  }

  OpPassManager pipeline{ModuleOp::getOperationName()};
};

} // namespace
