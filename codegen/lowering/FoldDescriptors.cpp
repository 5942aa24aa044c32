//===- FoldDescriptors.cpp - The kc-fold-descriptors pass -----------------===//
//
// Folds llvm.extractvalue of the llvm.insertvalue chains that the conversion
// to LLVM builds for memref descriptors, then erases what is dead (see
// Passes.td for why it is worth a pass of its own).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Iterators.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace kcc {
#define GEN_PASS_DEF_KCFOLDDESCRIPTORS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

struct KcFoldDescriptorsPass
    : public kcc::impl::KcFoldDescriptorsBase<KcFoldDescriptorsPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::ExtractValueOp op) {
      SmallVector<OpFoldResult, 1> folded;
      if (failed(op->fold(folded)) || folded.size() != 1)
        return;
      if (auto v = llvm::dyn_cast_if_present<Value>(folded.front()))
        if (v != op.getResult())
          op.getResult().replaceAllUsesWith(v);
    });
    // Users before producers: a chain dies in one sweep.
    getOperation().walk<WalkOrder::PostOrder, ReverseIterator>(
        [](Operation *op) {
          if (isOpTriviallyDead(op))
            op->erase();
        });
  }
};

} // namespace
