//===- KcLossOps.td - losses that are ops of their own -*- tablegen -*-===//
//
// A loss built of kc ops wherever its math allows (passes/Losses.cpp); the
// CTC likelihood is a dynamic program over the label lattice, so it is one
// op with a kernel (runtime/kernels/Ctc.cpp) that the interpreter and
// compiled code both call.
//
//===----------------------------------------------------------------------===//

#ifndef KC_LOSS_OPS_TD
#define KC_LOSS_OPS_TD

include "ir/KcBase.td"
include "ir/KcInterfaces.td"

// The kernel's types: Keras computes ctc in float32 at least.
def Kc_CtcFloatTensor : StaticShapeTensorOf<[F32, F64]>;

def Kc_CtcLossOp : Kc_Op<"ctc_loss",
    [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "CTC negative log-likelihood of labels under logits";
  let description = [{
    `logits` is `[B, T, C]` (unnormalized: log_softmax is applied inside),
    `labels` is `[B, N]` int32 with 0 the blank and the padding; example
    `b`'s label sequence is its first `L` labels, `L` the count of its
    non-zero ones, and every example has all `T` steps. The result `[B]` is
    `-log p(labels | logits)` as Keras's `ctc` loss computes it on JAX
    (transitions CTC forbids weigh `-1e5` in log space rather than `-inf`,
    so an infeasible alignment gives a large finite loss). A label outside
    `[0, C)` has log-probability 0, as `jax.nn.one_hot` gives it.

    ```mlir
    %l = kc.ctc_loss %logits, %labels : tensor<4x20x6xf32>, tensor<4x20xi32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Kc_CtcFloatTensor:$logits, StaticShapeTensorOf<[I32]>:$labels);
  let results = (outs Kc_CtcFloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` type($logits) `,` type($labels) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_CtcLossGradOp : Kc_Op<"ctc_loss_grad"> {
  let summary = "gradient of ctc_loss with respect to its logits";
  let description = [{
    `grad_output[b]` times the derivative of example `b`'s loss by its
    logits (softmax less the posterior occupancy of each class, from the
    forward and backward passes over the same lattice); the result has the
    logits' type.

    ```mlir
    %d = kc.ctc_loss_grad %logits, %labels, %g : tensor<4x20x6xf32>, tensor<4x20xi32>, tensor<4xf32> -> tensor<4x20x6xf32>
    ```
  }];
  let arguments = (ins Kc_CtcFloatTensor:$logits, StaticShapeTensorOf<[I32]>:$labels,
                       Kc_CtcFloatTensor:$grad_output);
  let results = (outs Kc_CtcFloatTensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `,` $grad_output attr-dict `:` type($logits) `,` type($labels) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KC_LOSS_OPS_TD
