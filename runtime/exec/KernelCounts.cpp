//===- KernelCounts.cpp - Static kernel count of a compiled step ----------===//

#include "runtime/exec/KernelCounts.h"

#include "codegen/Passes.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

using namespace kcc;

namespace {

int64_t bytesOf(mlir::Type type) {
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  unsigned bits = t.getElementType().getIntOrFloatBitWidth();
  return t.getNumElements() * ((bits + 7) / 8);
}

} // namespace

KernelCounts kcc::countKernels(mlir::ModuleOp module, llvm::StringRef funcName,
                               bool fuseElementwise) {
  mlir::MLIRContext *ctx = module.getContext();
  auto func = module.lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func)
    throw Error("count kernels: no function @" + funcName.str());
  // Only the function itself: the pipeline lowers every function it sees.
  mlir::OwningOpRef<mlir::ModuleOp> copy = mlir::ModuleOp::create(module.getLoc());
  copy->getBody()->push_back(func->clone());

  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic &d) {
      llvm::raw_string_ostream os(diagnostics);
      os << d.getLocation() << ": " << d << "\n";
      return mlir::success();
    });
    mlir::PassManager pm(ctx);
    CpuPipelineOptions opts;
    opts.fuseElementwise = fuseElementwise;
    buildLinalgPipeline(pm, opts);
    if (mlir::failed(pm.run(*copy)))
      throw Error("count kernels of @" + funcName.str() +
                  ": kc-linalg-pipeline failed:\n" + diagnostics);
  }

  KernelCounts counts;
  copy->walk([&](mlir::Operation *op) {
    if (auto call = llvm::dyn_cast<mlir::func::CallOp>(op)) {
      if (call.getCallee().starts_with("kcc_rt_"))
        ++counts.libraryCalls;
    } else if (llvm::isa<mlir::linalg::LinalgOp>(op)) {
      ++counts.loopNests;
    } else if (llvm::isa<mlir::tensor::EmptyOp,
                         mlir::bufferization::AllocTensorOp>(op)) {
      counts.intermediateBytes += bytesOf(op->getResult(0).getType());
    }
  });
  return counts;
}
