//===- OneShotBufferize.cpp - The kc-one-shot-bufferize pass --------------===//
//
// Tensors to buffers: MLIR's one-shot bufferization of the whole module with
// kc's options (identity layouts at function boundaries, copies as
// linalg.copy), the boundaries bufferized ahead of the bodies where no call
// passes a tensor (see Passes.td for why).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/memory/BufferizationOptions.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace kcc {
#define GEN_PASS_DEF_KCONESHOTBUFFERIZE
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;

mlir::LogicalResult kcc::copyAsLinalg(OpBuilder &b, Location loc, Value from,
                                      Value to) {
  b.create<linalg::CopyOp>(loc, from, to);
  return success();
}

bufferization::OneShotBufferizationOptions kcc::bufferizationOptions() {
  bufferization::OneShotBufferizationOptions options;
  options.memCpyFn = copyAsLinalg;
  options.bufferizeFunctionBoundaries = true;
  options.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  return options;
}

namespace {

struct KcOneShotBufferizePass
    : public kcc::impl::KcOneShotBufferizeBase<KcOneShotBufferizePass> {
  static bool isTensor(Type t) { return llvm::isa<TensorType>(t); }
  /// A tensor the boundary conversion takes: ranked, no encoding.
  static bool isPlainTensor(Type t) {
    auto ranked = llvm::dyn_cast<RankedTensorType>(t);
    return ranked && !ranked.getEncoding();
  }
  static MemRefType bufferOf(Type t) {
    auto ranked = llvm::cast<RankedTensorType>(t);
    return MemRefType::get(ranked.getShape(), ranked.getElementType());
  }

  /// Whether the boundaries can be bufferized ahead of the bodies.
  static bool boundariesAreSimple(ModuleOp module) {
    for (auto func : module.getOps<func::FuncOp>()) {
      FunctionType type = func.getFunctionType();
      if (func.isExternal()) {
        if (llvm::any_of(type.getInputs(), isTensor) ||
            llvm::any_of(type.getResults(), isTensor))
          return false;
        continue;
      }
      if (!llvm::all_of(
              type.getInputs(),
              [](Type t) { return !isTensor(t) || isPlainTensor(t); }) ||
          !llvm::all_of(type.getResults(), [](Type t) {
            return !isTensor(t) || isPlainTensor(t);
          }))
        return false;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        if (func.getArgAttr(i, "bufferization.buffer_layout"))
          return false;
    }
    WalkResult calls = module.walk([](CallOpInterface call) {
      Operation *op = call.getOperation();
      if (llvm::any_of(op->getOperandTypes(), isTensor) ||
          llvm::any_of(op->getResultTypes(), isTensor))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    return !calls.wasInterrupted();
  }

  static void bufferizeBoundary(func::FuncOp func) {
    Block &entry = func.getBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    SmallVector<Type> inputs;
    for (BlockArgument arg : entry.getArguments()) {
      Type type = arg.getType();
      if (!isTensor(type)) {
        inputs.push_back(type);
        continue;
      }
      bool writable = true;
      if (auto attr = func.getArgAttrOfType<BoolAttr>(arg.getArgNumber(),
                                                      "bufferization.writable"))
        writable = attr.getValue();
      MemRefType buffer = bufferOf(type);
      arg.setType(buffer);
      auto tensor = b.create<bufferization::ToTensorOp>(
          arg.getLoc(), type, arg, /*restrict=*/true, writable);
      arg.replaceAllUsesExcept(tensor, tensor);
      inputs.push_back(buffer);
    }
    SmallVector<Type> results;
    for (Type type : func.getFunctionType().getResults())
      results.push_back(isTensor(type) ? bufferOf(type) : type);
    func.walk([&](func::ReturnOp ret) {
      b.setInsertionPoint(ret);
      for (OpOperand &operand : ret->getOpOperands())
        if (isTensor(operand.get().getType()))
          operand.set(b.create<bufferization::ToMemrefOp>(
              ret.getLoc(), results[operand.getOperandNumber()], operand.get(),
              /*read_only=*/true));
    });
    func.setType(FunctionType::get(func.getContext(), inputs, results));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (!boundariesAreSimple(module)) {
      if (failed(bufferization::runOneShotModuleBufferize(module, options)))
        signalPassFailure();
      return;
    }
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        bufferizeBoundary(func);
    bufferization::OneShotBufferizationOptions bodies = options;
    bodies.bufferizeFunctionBoundaries = false;
    if (failed(bufferization::runOneShotBufferize(module, bodies))) {
      signalPassFailure();
      return;
    }
    bufferization::removeBufferizationAttributesInModule(module);
  }

  bufferization::OneShotBufferizationOptions options =
      kcc::bufferizationOptions();
};

} // namespace
