//===- OutlineKernels.cpp - Runs of kernels into functions of their own ---===//
//
// kc-outline-kernels: after kc-lower-loops a training step is one function
// holding every kernel (loop nests and library calls), thousands for a deep
// model. LLVM's function passes and its instruction scheduler (one region
// for all the straight-line calls) grow faster than linearly with a
// function's size, so compile time did too (each doubling of a Dense stack
// cost about 2.6x). Moving each run of up to 8 consecutive kernels (and up
// to about 1,000 operations, unless one kernel is bigger) into a private
// function of its own, never inlined, bounds every function LLVM optimizes:
// compile time linear in the number of kernels.
//
// Values the run reads from outside become arguments, except pure
// region-free ops (constants, views, pointer casts), which are cloned into
// the function so that every memref argument is a plain buffer the
// bare-pointer calling convention passes as one pointer. A run that would
// need a strided view as an argument stays where it is.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/Statistic.h"

#define DEBUG_TYPE "kc-outline-kernels"

STATISTIC(numOutlined, "loop nests outlined into kernel functions");

namespace kcc {
#define GEN_PASS_DEF_KCOUTLINEKERNELS
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

namespace {

/// The most operations (nested ones included) the kernels of one outlined
/// function hold, unless a single kernel is bigger. Eight fused loop groups
/// of optimizer updates made one function of 12,000 operations in a
/// 400-layer Dense stack: LLVM's cost grows faster than a function's size,
/// and one function is compiled on one thread.
constexpr int64_t kMaxOpsPerFunction = 1000;

/// Operations in `op`, itself included.
int64_t sizeOf(Operation &op) {
  int64_t n = 0;
  op.walk([&](Operation *) { ++n; });
  return n;
}

/// Ops cloned into an outlined function rather than passed to it: pure and
/// region-free (constants, views, pointer casts).
bool isSinkable(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// An address the function computes from a buffer: the aligned pointer of
/// a memref and what is added to it or cast from it (a library call's
/// operands, kc-plan-memory's arena offsets).
bool isAddress(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (isa<memref::ExtractAlignedPointerAsIndexOp>(def))
    return true;
  if (isa<arith::AddIOp, arith::IndexCastOp, LLVM::IntToPtrOp>(def))
    return llvm::any_of(def->getOperands(), isAddress);
  return false;
}

/// Where a buffer lives (with pass-placements): a view of the arena (its
/// offset a constant of the memory plan) or an address into it is passed,
/// not cloned, so that two kernels doing the same work on different
/// buffers come out identical (kc-dedupe-kernels keeps one of them).
bool isPlacement(Value v) {
  if (isAddress(v))
    return true;
  auto view = v.getDefiningOp<memref::ViewOp>();
  return view && view.getType().getLayout().isIdentity() &&
         view.getType().hasStaticShape();
}

/// A value an outlined function can take as an argument.
bool isPassable(Value v) {
  auto memref = dyn_cast<MemRefType>(v.getType());
  return !memref ||
         (memref.getLayout().isIdentity() && memref.hasStaticShape());
}

/// A kernel: what the outlined functions are made of.
bool isKernel(Operation &op) {
  if (isa<scf::ForOp, scf::ParallelOp>(op))
    return op.getNumResults() == 0;
  auto call = dyn_cast<func::CallOp>(op);
  return call && call.getNumResults() == 0;
}

/// Collects what `ops` need from outside: the values to pass (in first-use
/// order) and the ops to clone (in block order). Fails when a needed value
/// can be neither.
LogicalResult collectCaptures(ArrayRef<Operation *> ops, bool passPlacements,
                              llvm::SetVector<Value> &args,
                              SmallVector<Operation *> &sunk) {
  llvm::SetVector<Value> used;
  for (Operation *op : ops) {
    for (Value v : op->getOperands())
      used.insert(v);
    getUsedValuesDefinedAbove(op->getRegions(), used);
  }
  SmallVector<Value> work(used.begin(), used.end());
  llvm::SetVector<Operation *> toSink;
  Block *block = ops.front()->getBlock();
  for (size_t i = 0; i < work.size(); ++i) {
    Value v = work[i];
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == block && isSinkable(def) &&
        !(passPlacements && isPlacement(v))) {
      if (toSink.insert(def))
        llvm::append_range(work, def->getOperands());
      continue;
    }
    if (!isPassable(v))
      return failure();
    args.insert(v);
  }
  sunk.assign(toSink.begin(), toSink.end());
  llvm::sort(sunk,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return success();
}

/// Moves `ops` (consecutive kernels of one block, with only sinkable ops
/// between them) into a new function and calls it in their place.
void outline(func::FuncOp func, ArrayRef<Operation *> ops, bool passPlacements,
             unsigned &index, SymbolTable &symbols, OpBuilder &moduleBuilder) {
  llvm::SetVector<Value> args;
  SmallVector<Operation *> sunk;
  if (failed(collectCaptures(ops, passPlacements, args, sunk)))
    return;
  SmallVector<Type> types;
  for (Value v : args)
    types.push_back(v.getType());
  // A second run (over the calls of the first) numbers on.
  std::string name;
  do
    name = (func.getSymName() + "_kernel_" + llvm::Twine(index++)).str();
  while (symbols.lookup(name));
  Location loc = ops.front()->getLoc();
  auto kernel = moduleBuilder.create<func::FuncOp>(
      loc, name, moduleBuilder.getFunctionType(types, {}));
  kernel.setPrivate();
  symbols.insert(kernel);
  // The point is lost if LLVM inlines it back.
  kernel->setAttr("no_inline", moduleBuilder.getUnitAttr());
  // Internal to the object: two AOT libraries both have a train_step_kernel_0.
  kernel->setAttr("llvm.linkage",
                  LLVM::LinkageAttr::get(moduleBuilder.getContext(),
                                         LLVM::Linkage::Internal));
  Block *body = kernel.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(body);
  IRMapping mapping;
  for (auto [v, arg] : llvm::zip(args, body->getArguments()))
    mapping.map(v, arg);
  for (Operation *op : sunk)
    b.clone(*op, mapping);
  for (Operation *op : ops)
    b.clone(*op, mapping);
  b.create<func::ReturnOp>(loc);

  // At the last kernel: the placements passed may be defined between the
  // kernels (only pure ops are), and the kernels have no results.
  OpBuilder callBuilder(ops.back());
  callBuilder.create<func::CallOp>(
      loc, kernel, SmallVector<Value>(args.begin(), args.end()));
  for (Operation *op : ops)
    op->erase();
  ++numOutlined;
}

struct KcOutlineKernelsPass
    : public kcc::impl::KcOutlineKernelsBase<KcOutlineKernelsPass> {
  using KcOutlineKernelsBase::KcOutlineKernelsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());
    SymbolTable symbols(module);
    for (func::FuncOp func : funcs) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      // Outlined already.
      if (func->hasAttr("no_inline"))
        continue;
      // Runs of consecutive kernels, at most kernelsPerFunction each;
      // anything with an effect of its own (an allocation, a deallocation)
      // ends a run.
      SmallVector<SmallVector<Operation *>> runs(1);
      size_t kernels = 0;
      int64_t runSize = 0, totalSize = 0;
      for (Operation &op : func.getBody().front()) {
        if (isKernel(op)) {
          int64_t size = sizeOf(op);
          if (runs.back().size() == kernelsPerFunction ||
              (!runs.back().empty() && runSize + size > kMaxOpsPerFunction)) {
            runs.emplace_back();
            runSize = 0;
          }
          runs.back().push_back(&op);
          runSize += size;
          totalSize += size;
          ++kernels;
        } else if (!isSinkable(&op) && !runs.back().empty()) {
          runs.emplace_back();
          runSize = 0;
        }
      }
      // A function this small is one kernel's worth already.
      if (kernels <= kernelsPerFunction && totalSize <= kMaxOpsPerFunction)
        continue;
      unsigned index = 0;
      for (ArrayRef<Operation *> run : runs)
        if (!run.empty())
          outline(func, run, passPlacements, index, symbols, moduleBuilder);
    }
  }
};

} // namespace
