//===- LoweringUtils.cpp - Shared helpers of the kc -> linalg patterns ----===//

#include "codegen/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace kcc {
namespace codegen {

Value dataPointer(OpBuilder &b, Location loc, Value memref) {
  Value idx = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Value i64 = b.create<arith::IndexCastOp>(loc, b.getI64Type(), idx);
  return b.create<LLVM::IntToPtrOp>(
      loc, LLVM::LLVMPointerType::get(b.getContext()), i64);
}

Value pointerMemref(Value ptr) {
  auto toPtr = ptr.getDefiningOp<LLVM::IntToPtrOp>();
  auto cast = toPtr ? toPtr.getArg().getDefiningOp<arith::IndexCastOp>()
                    : arith::IndexCastOp();
  auto extract =
      cast
          ? cast.getIn().getDefiningOp<memref::ExtractAlignedPointerAsIndexOp>()
          : memref::ExtractAlignedPointerAsIndexOp();
  return extract ? extract.getSource() : Value();
}

bool isTiledMaxPoolGrad(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  // ABI: 3 pointers, 12 dims, then window h/w, strides h/w, padding.
  if (!call ||
      !(call.getCallee().starts_with("kcc_rt_max_pool2d_grad") ||
        call.getCallee().starts_with("kcc_rt_avg_pool2d_grad_relu_") ||
        call.getCallee().starts_with("kcc_rt_avg_pool2d_grad_tanh_") ||
        call.getCallee().starts_with("kcc_rt_avg_pool2d_grad_sigmoid_")) ||
      call.getNumOperands() != 20)
    return false;
  int64_t v[5];
  for (int i = 0; i < 5; ++i) {
    APInt value;
    if (!matchPattern(call.getOperand(15 + i), m_ConstantInt(&value)))
      return false;
    v[i] = value.getSExtValue();
  }
  return v[0] == v[2] && v[1] == v[3] && v[4] == 0;
}

bool isOuterLoopIndependent(linalg::LinalgOp op) {
  if (op.getNumLoops() == 0 ||
      op.getIteratorTypesArray()[0] != utils::IteratorType::parallel)
    return false;
  if (op.getNumLoops() == op.getNumParallelLoops())
    return true;
  AffineExpr d0 = getAffineDimExpr(0, op.getContext());
  return llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
    return llvm::is_contained(op.getMatchingIndexingMap(&init).getResults(),
                              d0);
  });
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  if (auto ft = dyn_cast<FloatType>(type))
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(ft, value));
  return b.create<arith::ConstantOp>(
      loc, b.getIntegerAttr(type, static_cast<int64_t>(value)));
}

Value emptyTensor(OpBuilder &b, Location loc, RankedTensorType type) {
  return b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType());
}

Value filledTensor(OpBuilder &b, Location loc, RankedTensorType type,
                   double value) {
  Value init = scalarConstant(b, loc, type.getElementType(), value);
  return b.create<linalg::FillOp>(loc, init, emptyTensor(b, loc, type))
      .getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, const BodyBuilder &body) {
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{resultType}, inputs,
      ValueRange{emptyTensor(b, loc, resultType)}, maps, iters,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value buildReduction(OpBuilder &b, Location loc, Value input,
                     ArrayRef<int64_t> axes, Value init,
                     const BodyBuilder &body) {
  auto inType = cast<RankedTensorType>(input.getType());
  unsigned rank = inType.getRank();
  SmallVector<AffineExpr> kept;
  SmallVector<utils::IteratorType> iters;
  for (unsigned d = 0; d < rank; ++d) {
    bool reduced = llvm::is_contained(axes, int64_t(d));
    iters.push_back(reduced ? utils::IteratorType::reduction
                            : utils::IteratorType::parallel);
    if (!reduced)
      kept.push_back(b.getAffineDimExpr(d));
  }
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, kept, b.getContext())};
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{init.getType()}, ValueRange{input}, ValueRange{init}, maps,
      iters, [&](OpBuilder &nb, Location nloc, ValueRange args) {
        nb.create<linalg::YieldOp>(nloc, body(nb, nloc, args));
      });
  return generic.getResult(0);
}

Value reshapeTensor(OpBuilder &b, Location loc, Value input,
                    RankedTensorType type) {
  auto inType = cast<RankedTensorType>(input.getType());
  if (inType == type)
    return input;
  // Through rank 1: collapse everything, then expand to the new shape. The
  // canonicalizer folds the pair where a direct reshape exists.
  auto flatType =
      RankedTensorType::get({inType.getNumElements()}, type.getElementType());
  auto allDims = [](int64_t rank) {
    ReassociationIndices group;
    for (int64_t d = 0; d < rank; ++d)
      group.push_back(d);
    return SmallVector<ReassociationIndices>{group};
  };
  Value flat = input;
  if (inType.getRank() == 0)
    flat = b.create<tensor::ExpandShapeOp>(loc, flatType, input,
                                           SmallVector<ReassociationIndices>{});
  else if (inType.getRank() > 1)
    flat = b.create<tensor::CollapseShapeOp>(loc, flatType, input,
                                             allDims(inType.getRank()));
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(
        loc, type, flat, SmallVector<ReassociationIndices>{});
  return b.create<tensor::ExpandShapeOp>(loc, type, flat,
                                         allDims(type.getRank()));
}

Value runningMax(OpBuilder &b, Location loc, Value x, Value acc) {
  Value gt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x, acc);
  Value isNan = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
  Value pick = b.create<arith::OrIOp>(loc, gt, isNan);
  return b.create<arith::SelectOp>(loc, pick, x, acc);
}

func::FuncOp getOrDeclare(OpBuilder &b, ModuleOp module, StringRef name,
                          FunctionType type) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = b.create<func::FuncOp>(module.getLoc(), name, type);
  f.setPrivate();
  return f;
}

} // namespace codegen
} // namespace kcc
