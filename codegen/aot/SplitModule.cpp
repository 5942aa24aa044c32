//===- SplitModule.cpp - An LLVM-dialect module in parts ------------------===//
//
// Longest function first into the lightest part (LPT scheduling): with the
// functions of a kc step (a few large kernels, many small ones) the parts
// come out within a few percent of each other.
//
//===----------------------------------------------------------------------===//

#include "codegen/aot/SplitModule.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <numeric>

using namespace kcc;
using namespace mlir;

namespace {

bool isLocal(LLVM::Linkage linkage) {
  return linkage == LLVM::Linkage::Internal ||
         linkage == LLVM::Linkage::Private;
}

/// A private constant without an initializer region: each part may hold a
/// copy (LLVM drops the copies a part does not use).
bool isCopyableConstant(Operation &op) {
  auto global = dyn_cast<LLVM::GlobalOp>(op);
  return global && global.getConstant() && isLocal(global.getLinkage()) &&
         global.getInitializerRegion().empty();
}

} // namespace

SmallVector<OwningOpRef<ModuleOp>> aot::splitModule(ModuleOp module) {
  SmallVector<OwningOpRef<ModuleOp>> parts;
  auto whole = [&] {
    parts.push_back(module.clone());
    parts.back()->walk(
        [](LLVM::LLVMFuncOp f) { f->removeAttr(kColdAttrName); });
    return std::move(parts);
  };

  SmallVector<LLVM::LLVMFuncOp> bodies;
  SmallVector<int64_t> weights;
  int64_t total = 0, coldTotal = 0;
  unsigned coldBodies = 0;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto f = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      if (f.isExternal())
        continue;
      int64_t weight = 0;
      f.walk([&](Operation *) { ++weight; });
      bodies.push_back(f);
      weights.push_back(weight);
      total += weight;
      if (f->hasAttr(kColdAttrName)) {
        coldTotal += weight;
        ++coldBodies;
      }
      continue;
    }
    if (!isCopyableConstant(op))
      return whole();
  }
  unsigned count = static_cast<unsigned>(std::min<int64_t>(
      {total / kOpsPerPart, kMaxParts, static_cast<int64_t>(bodies.size())}));
  if (count < 2)
    return whole();
  // Cold functions get parts of their own, as many as their share of the
  // operations (at least one, and at least one part for the others).
  unsigned hotBodies = bodies.size() - coldBodies;
  unsigned coldCount = 0;
  if (coldBodies > 0) {
    coldCount = static_cast<unsigned>((coldTotal * count + total / 2) / total);
    coldCount =
        std::clamp<unsigned>(coldCount, 1, hotBodies > 0 ? count - 1 : count);
    coldCount = std::min(coldCount, coldBodies);
  }
  unsigned hotCount = std::min(count - coldCount, hotBodies);
  count = hotCount + coldCount;

  // Heaviest first, ties in module order, so the split is deterministic;
  // hot functions into parts [0, hotCount), cold ones into the rest.
  SmallVector<unsigned> order(bodies.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return weights[a] > weights[b];
  });
  SmallVector<int64_t> load(count, 0);
  llvm::DenseMap<StringAttr, unsigned> home;
  for (unsigned i : order) {
    bool cold = bodies[i]->hasAttr(kColdAttrName);
    auto first = load.begin() + (cold ? hotCount : 0);
    auto last = cold ? load.end() : load.begin() + hotCount;
    unsigned lightest = std::min_element(first, last) - load.begin();
    home[bodies[i].getSymNameAttr()] = lightest;
    load[lightest] += weights[i];
  }

  // The functions some other part calls (or takes the address of).
  llvm::DenseSet<StringAttr> shared;
  for (LLVM::LLVMFuncOp f : bodies) {
    unsigned from = home.lookup(f.getSymNameAttr());
    std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(f);
    if (!uses)
      return whole();
    for (const SymbolTable::SymbolUse &use : *uses) {
      StringAttr callee = use.getSymbolRef().getRootReference();
      auto it = home.find(callee);
      if (it != home.end() && it->second != from)
        shared.insert(callee);
    }
  }

  MLIRContext *ctx = module.getContext();
  auto external = LLVM::LinkageAttr::get(ctx, LLVM::Linkage::External);
  for (unsigned p = 0; p < count; ++p) {
    OwningOpRef<ModuleOp> part = ModuleOp::create(module.getLoc());
    (*part)->setAttrs(module->getAttrDictionary());
    if (p >= hotCount)
      (*part)->setAttr(kColdAttrName, UnitAttr::get(module.getContext()));
    OpBuilder b = OpBuilder::atBlockEnd(part->getBody());
    for (Operation &op : module.getBody()->getOperations()) {
      auto f = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (!f || f.isExternal()) {
        b.clone(op);
        continue;
      }
      StringAttr name = f.getSymNameAttr();
      bool isShared = shared.contains(name);
      bool local = isLocal(f.getLinkage());
      LLVM::LLVMFuncOp copy;
      if (home.lookup(name) == p)
        copy = cast<LLVM::LLVMFuncOp>(b.clone(op));
      else if (isShared)
        copy = cast<LLVM::LLVMFuncOp>(b.cloneWithoutRegions(op));
      else
        continue;
      copy->removeAttr(kColdAttrName);
      // Called across parts: external, but hidden, so a shared library
      // still exports only the entry points.
      if (local && isShared) {
        copy.setLinkageAttr(external);
        copy.setVisibility_(LLVM::Visibility::Hidden);
      }
    }
    parts.push_back(std::move(part));
  }
  return parts;
}
