//===- PrepareOutParams.cpp - The kc-prepare-out-params pass --------------===//
//
// Makes every memref a public function returns a distinct memref.alloc, so
// buffer-results-to-out-params{hoist-static-allocs} can replace each one
// with the caller's buffer (see Passes.td for why).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringMap.h"

namespace kcc {
#define GEN_PASS_DEF_KCPREPAREOUTPARAMS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
namespace kc = kcc::kc;

namespace {

struct KcPrepareOutParamsPass
    : public kcc::impl::KcPrepareOutParamsBase<KcPrepareOutParamsPass> {
  void runOnOperation() override {
    // Which results update which arguments (the same kc.name: a parameter,
    // an optimizer slot, the step counter), while results are still results:
    // kc-mark-in-place checks them once they are out-params.
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // The arguments of each name, in order: one look-up per result (a
      // scan of every argument per result was quadratic in the model's
      // size: 0.07 s of a 400-layer step).
      llvm::StringMap<SmallVector<unsigned, 1>> argsByName;
      for (unsigned a = 0; a < func.getNumArguments(); ++a)
        if (std::optional<StringRef> name = kc::getArgName(func, a))
          argsByName[*name].push_back(a);
      SmallVector<int64_t> pairs;
      for (unsigned r = 0; r < func.getNumResults(); ++r) {
        std::optional<StringRef> name = kc::getResultName(func, r);
        if (!name)
          continue;
        auto it = argsByName.find(*name);
        if (it == argsByName.end())
          continue;
        for (unsigned a : it->second)
          if (func.getArgument(a).getType() == func.getResultTypes()[r]) {
            pairs.append({r, a});
            break;
          }
      }
      kc::setCount(func, kc::attr::kNumInputs, func.getNumArguments());
      if (!pairs.empty())
        kc::setUpdateCandidates(func, pairs);
    }
    getOperation().walk([](func::ReturnOp ret) {
      OpBuilder b(ret);
      llvm::SmallPtrSet<Value, 8> seen;
      for (OpOperand &operand : ret->getOpOperands()) {
        Value v = operand.get();
        auto type = dyn_cast<MemRefType>(v.getType());
        if (!type)
          continue;
        bool ownAlloc = v.getDefiningOp<memref::AllocOp>() != nullptr;
        if (ownAlloc && seen.insert(v).second)
          continue;
        // A fresh, identity-layout buffer of the result's shape.
        auto allocType =
            MemRefType::get(type.getShape(), type.getElementType());
        Value copy = b.create<memref::AllocOp>(ret.getLoc(), allocType,
                                               b.getI64IntegerAttr(64));
        b.create<linalg::CopyOp>(ret.getLoc(), v, copy);
        if (allocType != type)
          copy = b.create<memref::CastOp>(ret.getLoc(), type, copy);
        operand.set(copy);
        seen.insert(copy);
      }
    });
  }
};

} // namespace
