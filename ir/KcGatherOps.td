//===- KcGatherOps.td - gather and its gradient -*- tablegen -*-===//
//
// Row lookups (Embedding): gather reads rows of a table by integer index,
// gather_grad scatter-adds gradient rows back into a zeroed table.
//
//===----------------------------------------------------------------------===//

#ifndef KC_GATHER_OPS_TD
#define KC_GATHER_OPS_TD

include "ir/KcBase.td"
include "ir/KcInterfaces.td"

def Kc_GatherOp : Kc_Op<"gather",
    [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "rows of a table by integer index";
  let description = [{
    `table` is `[V, D...]`, `indices` any shape `[I...]`; the result is
    `[I..., D...]`, row `indices[i]` of the table at each `i`. As
    `jnp.take` (Keras's Embedding on JAX): an index in `[-V, 0)` counts
    from the end, any other index outside `[0, V)` gives a row of NaN.
    No index ever reads outside the table.

    ```mlir
    %e = kc.gather %table, %ids : tensor<1000x16xf32>, tensor<32x80xi32> -> tensor<32x80x16xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$table, Kc_IntTensor:$indices);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` type($table) `,` type($indices) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_GatherGradOp : Kc_Op<"gather_grad"> {
  let summary = "gradient of gather with respect to its table";
  let description = [{
    The result (the table's shape `[V, D...]`) is zero except for the rows
    `indices` name: each adds the matching row of `grad_output`
    (`[I..., D...]`). Only those rows are touched after the zeroing, as the
    indices wrap in gather; an index gather maps to NaN adds nothing.

    ```mlir
    %dt = kc.gather_grad %ids, %g : tensor<32x80xi32>, tensor<32x80x16xf32> -> tensor<1000x16xf32>
    ```
  }];
  let arguments = (ins Kc_IntTensor:$indices, Kc_FloatTensor:$grad_output);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $indices `,` $grad_output attr-dict `:` type($indices) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KC_GATHER_OPS_TD
