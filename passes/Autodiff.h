//===- Autodiff.h - Reverse-mode differentiation of kc functions -*- C++
//-*-===//
//
// Builds the backward pass of a kc computation from the ops' gradient rules
// (kc::GradientOpInterface). The train-step pass calls it on the loss of
// @forward; eager mode and tests call it directly.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_AUTODIFF_H
#define KCC_PASSES_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"

namespace kcc {

/// Builds d(loss)/d(w) for each `w` in `wrt` and returns them in order.
///
/// `loss` is a rank-0 float tensor defined in a block (a func body) and the
/// `wrt` values (block arguments or op results of that block) dominate it.
/// The reverse sweep is inserted at the builder's insertion point, which
/// must come after the loss's defining op: it seeds d(loss) = 1, visits in
/// reverse program order only the ops on a float data path from some `wrt`
/// value to the loss, calls each one's gradient rule and sums fan-out with
/// kc.add. Gradient code that no `wrt` value needs (the gradient of a matmul
/// operand that is input data, say) is erased again, so dead or untrainable
/// parts of the graph cost nothing. A `wrt` value the loss does not depend
/// on gets a zero constant.
///
/// An op on the path without a gradient rule is reported at that op ("no
/// gradient rule for 'kc.xyz'") and gives failure, before any IR is built.
/// The gradient ops carry their forward op's location with "/grad" appended
/// to its name (see kc::gradientLoc).
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildGradients(mlir::OpBuilder &b, mlir::Value loss, mlir::ValueRange wrt);

} // namespace kcc

#endif // KCC_PASSES_AUTODIFF_H
