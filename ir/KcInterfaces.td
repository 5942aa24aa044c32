//===- KcInterfaces.td - kc op interfaces -*- tablegen -*-===//
//
// Op interfaces of the kc dialect. The gradient rule of an op lives with the
// op, so the train-step pass, eager mode and the interpreter all share one
// autodiff (passes/Autodiff.h drives the reverse sweep).
//
//===----------------------------------------------------------------------===//

#ifndef KC_INTERFACES_TD
#define KC_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Kc_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::kcc::kc";
  let description = [{
    An op that knows its vector-Jacobian product: given the gradient of the
    loss with respect to its (single) result, it builds the ops that compute
    the gradient with respect to each operand.

    Gradient ops are created at the builder's insertion point with the
    location `kc::gradientLoc(op)`: the forward op's name with `/grad`
    appended (e.g. `loc("dense_1/grad"(...))`), so per-layer names survive
    into the backward pass.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradient with respect to every operand from `resultGrad`
        (the gradient of the result, of the result's type). Returns one
        value per operand, of that operand's type, or a null value for an
        operand that carries no gradient (integer labels, masks, counters).
      }],
      "::llvm::SmallVector<::mlir::Value>", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder, "::mlir::Value":$resultGrad)>,
  ];
}

#endif // KC_INTERFACES_TD
