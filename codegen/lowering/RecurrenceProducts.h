//===- RecurrenceProducts.h - Products with U for the cells -----*- C++ -*-===//
//
// The products of the generated recurrent steps with the recurrent kernel
// U, blocked so that the sums stay in vector registers: the forward's
// h_prev . U, the backward's carry d z . U^T, the per-step d U += h_prev^T .
// d z and d rbias += sum d z. Offsets are flat element offsets into 1-d
// memrefs (layouts in runtime/kernels/Recurrence.h).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_LOWERING_RECURRENCEPRODUCTS_H
#define KCC_CODEGEN_LOWERING_RECURRENCEPRODUCTS_H

#include "codegen/lowering/RecurrenceCells.h"

namespace kcc {
namespace codegen {
namespace recurrence {

/// acc[r * gates + k] += sum over j < K of lhs[lhsRow[r] + j] times
/// U[j, col0 + k * H + c0 .. + w], for the rows r of a block: each row of U
/// loaded once for all the block's rows, the sums in registers.
llvm::SmallVector<mlir::Value>
productBlock(VectorBuilder &vb, const RecurrenceSizes &dims, mlir::Value u,
             int64_t col0, mlir::Value c0, int64_t w, int64_t gates, int64_t K,
             mlir::Value lhs, llvm::ArrayRef<mlir::Value> lhsRow,
             llvm::SmallVector<mlir::Value> acc);

/// The carry's product for the rows of a block: dst[dstRow[r] + c] (+)=
/// sum over k < gates, j < H of src[srcRow[r] + k * H + j] times
/// U^T[utRow0 + k * H + j, c], one partial sum per gate in registers.
void carryProduct(VectorBuilder &vb, const RecurrenceSizes &dims,
                  mlir::Value ut, int64_t utRow0, int64_t gates,
                  mlir::Value src, llvm::ArrayRef<mlir::Value> srcRow,
                  mlir::Value dst, llvm::ArrayRef<mlir::Value> dstRow,
                  bool accumulate);

/// d U[k, col + j] += sum over b of lhs[lhsBase + b * lhsLd + k] times
/// src[srcBase + b * srcLd + j], for k < H, j < cols: kGradRows rows of
/// d U (16 lanes each) in registers over the batch.
void accumulateOuter(VectorBuilder &vb, const RecurrenceSizes &dims,
                     mlir::Value lhs, mlir::Value lhsBase, mlir::Value lhsLd,
                     mlir::Value src, mlir::Value srcBase, int64_t srcLd,
                     int64_t cols, mlir::Value grad, mlir::Value dUCol);

/// d rbias[j] += sum over b of src[srcBase + b * srcLd + j], j < N.
void accumulateColumnSums(VectorBuilder &vb, const RecurrenceSizes &dims,
                          mlir::Value src, mlir::Value srcBase, int64_t srcLd,
                          mlir::Value grad, mlir::Value dRb);

/// Offsets of the rows [b0, b0 + rows): base + b * ld.
llvm::SmallVector<mlir::Value> rowsAt(VectorBuilder &vb, mlir::Value base,
                                      mlir::Value ld, mlir::Value b0,
                                      int64_t rows);

llvm::SmallVector<mlir::Value> rowsAt(VectorBuilder &vb, mlir::Value base,
                                      int64_t ld, mlir::Value b0, int64_t rows);

} // namespace recurrence
} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_RECURRENCEPRODUCTS_H
