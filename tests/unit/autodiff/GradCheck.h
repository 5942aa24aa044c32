//===- GradCheck.h - Central-difference checks of kc gradients -*- C++ -*-===//
//
// The oracle of the autodiff tests: a function @f(x0.., extra..) returning a
// rank-0 f64 loss is differentiated with kcc::buildGradients into @f_grad,
// both run in the interpreter, and every element of every analytic gradient
// is compared with (f(x + h e_i) - f(x - h e_i)) / 2h.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TESTS_UNIT_AUTODIFF_GRADCHECK_H
#define KCC_TESTS_UNIT_AUTODIFF_GRADCHECK_H

#include "runtime/NDArray.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace kcc {
namespace test {

/// The relative error below which a gradient element passes:
/// |analytic - numeric| / max(|analytic|, |numeric|, 1e-2).
constexpr double kGradTolerance = 1e-6;

/// An f64 array of `shape` with uniform values in [lo, hi) (fixed seed).
NDArray uniform(const Shape &shape, double lo, double hi, unsigned seed);
/// Like uniform, but |value| in [lo, hi) with a random sign: keeps inputs
/// away from the kink at 0 (relu, abs).
NDArray awayFromZero(const Shape &shape, double lo, double hi, unsigned seed);
/// "tensor<2x3xf64>" for {2, 3}.
std::string f64Tensor(const Shape &shape);
/// The shape of a tensor type written as text, e.g. "tensor<2x3xf64>".
Shape shapeOfType(mlir::MLIRContext &ctx, const std::string &type);

/// Parses `text` (kc and func registered) or fails the test.
mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &ctx,
                                        const std::string &text);
/// An MLIRContext with the kc and func dialects loaded.
void loadDialects(mlir::MLIRContext &ctx);

/// Result of one gradient check.
struct GradCheckResult {
  bool built = false;     ///< buildGradients succeeded, IR verified
  double maxRelError = 0; ///< over all elements of all gradients
  std::string worst;      ///< where the largest error is, for messages
  int64_t elementsChecked = 0;
};

/// Differentiates @f of `module` with respect to its first `numWrt`
/// arguments and checks every gradient element by central differences.
/// `inputs` holds one array per argument of @f.
GradCheckResult checkGradients(mlir::ModuleOp module,
                               const std::vector<NDArray> &inputs, int numWrt);

/// Checks the gradient of one op through the loss sum(op(x..) * R) with a
/// fixed random R, so a generic vector-Jacobian product is tested. `body`
/// defines %y of type `resultType` from %x0, %x1, ... of `argTypes`.
GradCheckResult checkOp(mlir::MLIRContext &ctx, const std::string &body,
                        const std::vector<std::string> &argTypes,
                        const std::string &resultType,
                        const std::vector<NDArray> &inputs);

} // namespace test
} // namespace kcc

/// Expects a gradient check that built, checked elements and passed.
#define EXPECT_GRADIENTS_MATCH(expr)                                           \
  do {                                                                         \
    ::kcc::test::GradCheckResult kccResult_ = (expr);                          \
    EXPECT_TRUE(kccResult_.built);                                             \
    EXPECT_GT(kccResult_.elementsChecked, 0);                                  \
    EXPECT_LT(kccResult_.maxRelError, ::kcc::test::kGradTolerance)             \
        << kccResult_.worst;                                                   \
  } while (false)

#endif // KCC_TESTS_UNIT_AUTODIFF_GRADCHECK_H
