//===- EpilogueActivations.h - Activations a GEMM epilogue applies -*- C++
//-*-===//
//
// Internal to codegen/: recognises, in the scalar body of a linalg.generic,
// the activations a GEMM or convolution call can apply to its output
// (runtime/LibraryCalls.h's EpilogueActivation), as kc-lower-to-linalg and
// kc-fuse-elementwise leave them: relu (`select(x < 0, 0, x)` or
// `maximumf(x, 0)`), tanh, sigmoid, gelu (both forms), silu/swish, and
// the ones frontend/ops/Activations.cpp composes of kc ops (elu, selu,
// leaky_relu, relu6 and ReLU(max_value), softplus, mish, hard_sigmoid,
// hard_silu, exponential, softsign). The alpha, slope or maximum is read
// from the body's constant; every other constant must be exactly the one
// the composition has. Operands of commutative ops may come in either
// order, and the value the activation applies to may be computed several
// times (kc-fuse-elementwise inlines a shared producer once per use).
// Also the gradients of relu, tanh and sigmoid, from their output, that a
// pooling's gradient call can apply as it writes.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_FUSION_EPILOGUEACTIVATIONS_H
#define KCC_CODEGEN_FUSION_EPILOGUEACTIVATIONS_H

#include "runtime/LibraryCalls.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kcc {
namespace codegen {

/// The activation `result` applies, in `activation` (None when it is none
/// of them) with its parameter in `param` (elu's alpha, leaky_relu's
/// slope, the relu's maximum; 0 otherwise), and the value it applies it
/// to; `result` itself when it is none of them.
mlir::Value matchActivation(mlir::Value result, EpilogueActivation &activation,
                            double &param);

/// The gradient of the activation whose output is `y` applied to the
/// gradient `g` (both values of a linalg.generic's body), computed by
/// `result` as kc-lower-to-linalg emits the kc ops of
/// ir/gradients/ElementwiseGradients.cpp: relu's mask `select(y > 0, g,
/// 0)`, tanh's `g * (1 - y * y)` or sigmoid's `g * (y * (1 - y))`
/// (multiplications in either order). Relu, Tanh, Sigmoid or None.
EpilogueActivation matchActivationGradient(mlir::Value result, mlir::Value g,
                                           mlir::Value y);

/// The activation's Keras name ("" for None).
llvm::StringRef activationName(EpilogueActivation activation);

/// The activation as the fusion remarks name it, its parameter included
/// ("elu (alpha 0.5)", "relu6").
std::string describeActivation(EpilogueActivation activation, double param);

} // namespace codegen
} // namespace kcc

#endif // KCC_CODEGEN_FUSION_EPILOGUEACTIVATIONS_H
