//===- LoweringUtils.h - Shared helpers of the kc -> linalg patterns -*- C++
//-*-===//
//
// Internal to codegen/: the pattern files (one per op family) share these
// builders and register their patterns through the populate functions.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_LOWERING_LOWERINGUTILS_H
#define KCC_CODEGEN_LOWERING_LOWERINGUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

#include <functional>

namespace kcc {
namespace codegen {

/// Builds the scalar body of a linalg.generic from its block arguments (the
/// input elements, then the output elements) and returns the yielded values.
using BodyBuilder = std::function<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A floating-point or integer constant of scalar type `type`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);

/// tensor.empty of `type`.
mlir::Value emptyTensor(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);

/// tensor.empty of `type` filled with `value` (linalg.fill).
mlir::Value filledTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, double value);

/// An all-parallel linalg.generic with identity maps over `resultType`'s
/// shape: one result, inputs of that shape. The body gets the input
/// elements and the (unused) output element.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType,
                             mlir::ValueRange inputs, const BodyBuilder &body);

/// A linalg.generic reducing `input` over `axes` into `init` (whose shape is
/// the input's with the axes dropped). The body gets (in, acc).
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value input, llvm::ArrayRef<int64_t> axes,
                           mlir::Value init, const BodyBuilder &body);

/// Reshapes a tensor to `type` (same element count) by collapsing and
/// expanding: no data movement after bufferization.
mlir::Value reshapeTensor(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value input, mlir::RankedTensorType type);

/// `x > acc || x != x ? x : acc`: the kernel library's running maximum
/// (nanMax: reduce_max, softmax, max pooling), where a NaN input wins and
/// then stays, as in Keras. Compiled code must match it bit for bit; no
/// fast-math flag may drop the NaN test.
mlir::Value runningMax(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                       mlir::Value acc);

/// A memref's first element as the `!llvm.ptr` a library call takes
/// (identity layout, offset 0).
mlir::Value dataPointer(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value memref);

/// The private, external declaration of `name` in `module`: the existing
/// one, or a new one of `type` at the module's start.
mlir::func::FuncOp getOrDeclare(mlir::OpBuilder &b, mlir::ModuleOp module,
                                llvm::StringRef name, mlir::FunctionType type);

/// The memref a library call's pointer argument was taken from (through
/// dataPointer's extract / index_cast / inttoptr), or null.
mlir::Value pointerMemref(mlir::Value ptr);

/// Whether `call` is a kcc_rt_max_pool2d_grad* call, or an
/// avg_pool2d_grad_<activation> one (x: the activation's output), whose
/// windows tile its input (window == stride, valid padding): each input
/// element is in at most one window, so the kernel may mask in place or
/// write over x.
bool isTiledMaxPoolGrad(mlir::Operation *call);

/// Whether the outermost loop of `op` may run its iterations on different
/// threads: it is parallel, and every output is indexed by it (so two
/// iterations never write one element; inner reductions stay per thread).
bool isOuterLoopIndependent(mlir::linalg::LinalgOp op);

/// Lowers `op` (on buffers) to a loop nest in its place and erases it. When
/// the innermost dimension allows, it steps by vector lanes and the body
/// runs on vectors (VectorLoops.cpp); `keepOuterUnitStep` keeps a nest of
/// one loop scalar (a fusion group runs it one row at a time). Returns the
/// outermost loop, null for a 0-d op.
mlir::FailureOr<mlir::scf::ForOp> lowerToLoopNest(mlir::RewriterBase &rewriter,
                                                  mlir::linalg::LinalgOp op,
                                                  bool keepOuterUnitStep);

/// The pattern families (one file each).
void populateElementwisePatterns(mlir::RewritePatternSet &patterns);
void populateShapePatterns(mlir::RewritePatternSet &patterns);
void populateReductionPatterns(mlir::RewritePatternSet &patterns);
void populateLibraryCallPatterns(mlir::RewritePatternSet &patterns);
void populateRecurrencePatterns(mlir::RewritePatternSet &patterns);

/// Name prefix of the runtime entry points; the pass counts calls by it.
inline constexpr llvm::StringLiteral kLibraryCallPrefix = "kcc_rt_";

} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_LOWERING_LOWERINGUTILS_H
