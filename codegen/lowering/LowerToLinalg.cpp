//===- LowerToLinalg.cpp - The kc-lower-to-linalg pass --------------------===//
//
// Drives the per-family patterns (LowerElementwise, LowerShape,
// LowerReductions, LowerLibraryCalls) as one partial conversion: every kc op
// must go, so a kc op without a pattern is a hard error naming the op and
// its location rather than a silently half-lowered module.
//
// The lowering phase (codegen/lowering/). In: a kc module (@forward,
// @train_step) on tensors. Out, in two steps of the CPU pipeline: linalg on
// tensors with library calls for GEMMs, convolutions and recurrences (this
// pass and the per-family patterns); then, after fusion/ and memory/, the
// planned buffers as loops (kc-lower-loops, VectorLoops), one function per
// kernel (kc-outline-kernels), f32 tanh as the kernels compute it
// (kc-expand-math), and the LLVM dialect without descriptor chains
// (kc-fold-descriptors).
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/lowering/LoweringUtils.h"
#include "ir/KcDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/DialectConversion.h"

#define DEBUG_TYPE "kc-lower-to-linalg"

namespace kcc {
#define GEN_PASS_DEF_KCLOWERTOLINALG
#include "codegen/Passes.h.inc"
} // namespace kcc

using namespace mlir;
using namespace kcc;

namespace {

struct KcLowerToLinalgPass
    : public kcc::impl::KcLowerToLinalgBase<KcLowerToLinalgPass> {
  using KcLowerToLinalgBase::KcLowerToLinalgBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    // The caller's arrays are inputs: without this, one-shot bufferization
    // may reuse an argument's buffer for a result.
    if (!writableArgs) {
      module.walk([&](func::FuncOp f) {
        if (f.isExternal())
          return;
        for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i)
          if (isa<TensorType>(f.getArgument(i).getType()))
            f.setArgAttr(i, "bufferization.writable",
                         BoolAttr::get(ctx, false));
      });
    }

    ConversionTarget target(*ctx);
    target.addIllegalDialect<kc::KcDialect>();
    target.addLegalDialect<
        arith::ArithDialect, bufferization::BufferizationDialect,
        func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
        math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
        tensor::TensorDialect, vector::VectorDialect>();
    RewritePatternSet patterns(ctx);
    codegen::populateElementwisePatterns(patterns);
    codegen::populateShapePatterns(patterns);
    codegen::populateReductionPatterns(patterns);
    codegen::populateLibraryCallPatterns(patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();

    module.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(codegen::kLibraryCallPrefix))
        ++numLibraryCalls;
    });
  }
};

} // namespace
