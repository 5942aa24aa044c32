//===- KcShapeOps.td - constants, layout, reductions -*- tablegen -*-===//
//
// Ops that move or summarize data without arithmetic per element: constants,
// broadcasting, reshape/transpose/concat/slice and reductions.
//
//===----------------------------------------------------------------------===//

#ifndef KC_SHAPE_OPS_TD
#define KC_SHAPE_OPS_TD

include "ir/KcBase.td"

def Kc_ConstantOp : Kc_Op<"constant",
    [ConstantLike, AllTypesMatch<["value", "result"]>,
     DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = kc.constant dense<0.0> : tensor<32x128xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

def Kc_BroadcastToOp : Kc_Op<"broadcast_to", [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "numpy-style broadcast to a larger shape";
  let description = [{
    Aligns the operand's dims with the result's from the right; each operand
    dim must be 1 or equal to the result's. Leading result dims are new.

    ```mlir
    %b = kc.broadcast_to %bias : tensor<128xf32> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kc_AnyTensor:$x);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Kc_ReshapeOp : Kc_Op<"reshape", [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "row-major reshape";
  let description = [{
    Reinterprets the elements in row-major order with a new shape of the same
    element count.

    ```mlir
    %f = kc.reshape %x : tensor<32x7x7x64xf32> -> tensor<32x3136xf32>
    ```
  }];
  let arguments = (ins Kc_AnyTensor:$x);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Kc_TransposeOp : Kc_Op<"transpose", [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "permutes dims";
  let description = [{
    `result.shape[i] = x.shape[perm[i]]`.

    ```mlir
    %t = kc.transpose %x {perm = array<i64: 1, 0>} : tensor<32x64xf32> -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Kc_AnyTensor:$x, DenseI64ArrayAttr:$perm);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Kc_ConcatOp : Kc_Op<"concat", [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "joins tensors along one axis";
  let description = [{
    All inputs share the element type and every dim except `axis`.

    ```mlir
    %c = kc.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Kc_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
}

def Kc_SliceOp : Kc_Op<"slice", [DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "strided slice";
  let description = [{
    `result[i] = x[start + i * strides]` per dim, for `i` up to the
    result's dim; `limit` (exclusive) bounds each dim as in StableHLO.

    ```mlir
    %s = kc.slice %x {start = array<i64: 0, 2>, limit = array<i64: 4, 8>, strides = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Kc_AnyTensor:$x, DenseI64ArrayAttr:$start,
                       DenseI64ArrayAttr:$limit, DenseI64ArrayAttr:$strides);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

class Kc_ReduceOp<string mnemonic, string what>
    : Kc_Op<mnemonic, [SameOperandsAndResultElementType,
                        DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "reduces the " # what # " over axes";
  let description = [{
    Reduces `x` over `axes` (sorted, unique, non-negative); with `keepdims`
    the reduced dims stay as size 1.

    ```mlir
    %r = kc.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : tensor<32x10xf32> -> tensor<32x1xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Kc_ReduceSumOp : Kc_ReduceOp<"reduce_sum", "sum">;
def Kc_ReduceMaxOp : Kc_ReduceOp<"reduce_max", "maximum">;
def Kc_ReduceMeanOp : Kc_ReduceOp<"reduce_mean", "mean">;

def Kc_ArgmaxOp : Kc_Op<"argmax"> {
  let summary = "index of the maximum along one axis";
  let description = [{
    The first maximal index along `axis`, which is dropped from the shape.

    ```mlir
    %i = kc.argmax %logits {axis = 1 : i64} : tensor<32x10xf32> -> tensor<32xi64>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x, I64Attr:$axis);
  let results = (outs Kc_IntTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Kc_OneHotOp : Kc_Op<"one_hot"> {
  let summary = "integer labels to one-hot float rows";
  let description = [{
    Appends a dim of size `depth` (the result's last dim): 1 at the label's
    index, 0 elsewhere (all 0 for a label out of range).

    ```mlir
    %oh = kc.one_hot %labels : tensor<32xi32> -> tensor<32x10xf32>
    ```
  }];
  let arguments = (ins Kc_IntTensor:$labels);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$labels attr-dict `:` type($labels) `->` type($result)";
  let hasVerifier = 1;
}

#endif // KC_SHAPE_OPS_TD
