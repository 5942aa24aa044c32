//===- DedupeKernels.cpp - One function per distinct kernel body ----------===//
//
// kc-dedupe-kernels: after kc-outline-kernels a deep model has thousands of
// kernel functions, and a network of repeated blocks (ResNet's bottlenecks,
// DenseNet's conv blocks, NASNet's cells) has many that differ only in
// where their buffers live. kc-outline-kernels passes the placements (arena
// views and addresses) as arguments, so those come out identical; this pass
// keeps the first of each set and points every call at it, and puts a
// kernel called once back in its caller (for kc-outline-kernels to group
// with its neighbours, as without this pass). LLVM's instruction selection,
// most of the compile, then runs once per distinct kernel instead of once
// per use.
//
// Two kernels are identical when they print the same (without their names):
// the text is the structural equivalence of the whole body, nested regions,
// attributes and types included.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "kc-dedupe-kernels"

STATISTIC(numRemoved, "kernel functions replaced by an identical one");
STATISTIC(numInlined, "kernels called once put back in their caller");

namespace kcc {
#define GEN_PASS_DEF_KCDEDUPEKERNELS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

/// `kernel` as text, its name left out.
std::string bodyKey(func::FuncOp kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Verified already: printing need not verify each function again; the
  // local scope numbers this function alone, not the whole module.
  kernel->print(os, OpPrintingFlags().assumeVerified().useLocalScope());
  std::string name = ("@" + kernel.getSymName() + "(").str();
  size_t at = text.find(name);
  if (at != std::string::npos)
    text.replace(at, name.size(), "(");
  return text;
}

/// Replaces `call` by the body of `kernel`, its only caller, and erases it.
void inlineBack(func::CallOp call, func::FuncOp kernel) {
  Block &body = kernel.getBody().front();
  IRMapping mapping;
  for (auto [arg, value] :
       llvm::zip(body.getArguments(), call.getArgOperands()))
    mapping.map(arg, value);
  OpBuilder b(call);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  call.erase();
  kernel.erase();
}

struct KcDedupeKernelsPass
    : public kcc::impl::KcDedupeKernelsBase<KcDedupeKernelsPass> {
  using KcDedupeKernelsBase::KcDedupeKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<func::FuncOp> firstOf;
    SmallVector<func::FuncOp> kept;
    llvm::DenseMap<StringAttr, FlatSymbolRefAttr> replacement;
    SmallVector<func::FuncOp> removed;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      // Only what kc-outline-kernels made: private, so every use is a call
      // in this module.
      if (kernel.isExternal() || !kernel.isPrivate() ||
          !kernel->hasAttr("no_inline"))
        continue;
      auto [it, inserted] = firstOf.try_emplace(bodyKey(kernel), kernel);
      if (inserted) {
        kept.push_back(kernel);
        continue;
      }
      replacement[kernel.getSymNameAttr()] =
          FlatSymbolRefAttr::get(it->second.getSymNameAttr());
      removed.push_back(kernel);
    }
    DenseMap<StringAttr, SmallVector<func::CallOp, 1>> callsOf;
    module.walk([&](func::CallOp call) {
      auto it = replacement.find(call.getCalleeAttr().getAttr());
      if (it != replacement.end())
        call.setCalleeAttr(it->second);
      callsOf[call.getCalleeAttr().getAttr()].push_back(call);
    });
    for (func::FuncOp kernel : removed)
      kernel.erase();
    // A kernel called once goes back where it was: kc-outline-kernels then
    // groups it with its neighbours, and LLVM sees no more functions than
    // without this pass (its cost per function ate the savings otherwise).
    for (func::FuncOp kernel : kept) {
      auto it = callsOf.find(kernel.getSymNameAttr());
      if (it == callsOf.end() || it->second.size() != 1)
        continue;
      inlineBack(it->second.front(), kernel);
      ++numInlined;
    }
    numRemoved += removed.size();
  }
};

} // namespace
