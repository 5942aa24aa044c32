//===- KcNNOps.td - matmul, softmax, convolution, pooling, random -*- tablegen -*-===//
//
// The ops that map onto library calls (GEMM, convolution) or carry their own
// numerics (softmax, pooling), plus the gradient ops autodiff emits for them.
// Convolution and pooling are NHWC with HWIO filters, as Keras on CPU.
//
//===----------------------------------------------------------------------===//

#ifndef KC_NN_OPS_TD
#define KC_NN_OPS_TD

include "ir/KcBase.td"

def Kc_MatmulOp : Kc_Op<"matmul", [SameOperandsAndResultElementType,
                                  DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "2-D matrix product with optional transposes";
  let description = [{
    `result = op(lhs) x op(rhs)` where `op` transposes when the flag is set;
    `op(lhs)` is MxK, `op(rhs)` is KxN and the result MxN. The transposes let
    autodiff express `dW = x^T dy` without a separate transpose.

    ```mlir
    %y = kc.matmul %x, %w : tensor<32x784xf32>, tensor<784x128xf32> -> tensor<32x128xf32>
    %dx = kc.matmul %dy, %w {transpose_rhs = true} : tensor<32x128xf32>, tensor<784x128xf32> -> tensor<32x784xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$lhs, Kc_FloatTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_BatchMatmulOp : Kc_Op<"batch_matmul", [SameOperandsAndResultElementType,
                                  DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "batched 3-D matrix product with optional transposes";
  let description = [{
    For each `b` of the leading (batch) dim, which both operands share,
    `result[b] = op(lhs[b]) x op(rhs[b])` as in `kc.matmul`: `op(lhs[b])`
    is MxK, `op(rhs[b])` KxN, the result `[B, M, N]`. Attention's scores
    (`q k^T` per batch and head) and its weighted sum of values; the
    transposes make the gradients batch_matmuls again.

    ```mlir
    %s = kc.batch_matmul %q, %k {transpose_rhs = true} : tensor<64x40x8xf32>, tensor<64x40x8xf32> -> tensor<64x40x40xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$lhs, Kc_FloatTensor:$rhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
                       DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Kc_SoftmaxLikeOp<string mnemonic, string formula>
    : Kc_Op<mnemonic, [SameOperandsAndResultType,
                        DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = formula # " along one axis";
  let description = [{
    Computes `}] # formula # [{` along `axis` (default: the last), with the
    maximum subtracted first so large inputs stay finite.

    ```mlir
    %p = kc.}] # mnemonic # [{ %logits {axis = 1 : i64} : tensor<32x10xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x,
                       DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kc_SoftmaxOp : Kc_SoftmaxLikeOp<"softmax", "exp(x) / sum(exp(x))">;
def Kc_LogSoftmaxOp : Kc_SoftmaxLikeOp<"log_softmax", "x - log(sum(exp(x)))">;

// Window attributes shared by convolution and pooling ops.
defvar Kc_Strides = DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
defvar Kc_Dilations = DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">;
defvar Kc_PaddingDefault =
    DefaultValuedAttr<Kc_PaddingAttr, "::kcc::kc::Padding::Valid">;
// Grouped convolution: the channels split into `groups` independent
// convolutions (depthwise: groups = input channels).
defvar Kc_Groups = DefaultValuedAttr<I64Attr, "1">;

def Kc_Conv2DOp : Kc_Op<"conv2d", [SameOperandsAndResultElementType,
                                  DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "2-D convolution, NHWC input, HWIO filter";
  let description = [{
    Cross-correlation as in Keras's Conv2D: input `[N,H,W,C]`, filter
    `[KH,KW,C,F]`, result `[N,OH,OW,F]`. `padding = same` gives
    `OH = ceil(H / stride)` with the odd padding row at the bottom (TF rule);
    `valid` gives `OH = (H - (KH-1)*dilation - 1) / stride + 1`.
    With `groups = G` the filter is `[KH,KW,C/G,F]`: output channel `f`
    reads input channels `[g*C/G, (g+1)*C/G)` of its group `g = f / (F/G)`
    (Keras's `groups`; a depthwise convolution is `G = C`).

    ```mlir
    %y = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<8x28x28x1xf32>, tensor<3x3x1x32xf32> -> tensor<8x14x14x32xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$input, Kc_FloatTensor:$filter,
                       Kc_Strides:$strides, Kc_Dilations:$dilations,
                       Kc_PaddingDefault:$padding, Kc_Groups:$groups);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` type($input) `,` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_Conv2DBackpropInputOp : Kc_Op<"conv2d_backprop_input",
    [SameOperandsAndResultElementType,
     DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    Given the gradient of a conv2d result and its filter, the gradient of its
    input (the result type names the input's shape, which the output shape
    alone does not determine).

    It is also the transposed convolution (Keras's Conv2DTranspose, whose
    kernel `[KH,KW,out,in]` is this op's filter as it stands).

    ```mlir
    %dx = kc.conv2d_backprop_input %dy, %w {padding = #kc<padding same>} : tensor<8x28x28x32xf32>, tensor<3x3x1x32xf32> -> tensor<8x28x28x1xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$grad_output, Kc_FloatTensor:$filter,
                       Kc_Strides:$strides, Kc_Dilations:$dilations,
                       Kc_PaddingDefault:$padding, Kc_Groups:$groups);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad_output `,` $filter attr-dict `:` type($grad_output) `,` type($filter) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_Conv2DBackpropFilterOp : Kc_Op<"conv2d_backprop_filter",
    [SameOperandsAndResultElementType]> {
  let summary = "gradient of conv2d with respect to its filter";
  let description = [{
    Given a conv2d's input and the gradient of its result, the gradient of its
    filter (the result type names the filter's shape).

    ```mlir
    %dw = kc.conv2d_backprop_filter %x, %dy {padding = #kc<padding same>} : tensor<8x28x28x1xf32>, tensor<8x28x28x32xf32> -> tensor<3x3x1x32xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$input, Kc_FloatTensor:$grad_output,
                       Kc_Strides:$strides, Kc_Dilations:$dilations,
                       Kc_PaddingDefault:$padding, Kc_Groups:$groups);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $grad_output attr-dict `:` type($input) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

class Kc_PoolOp<string mnemonic, string what>
    : Kc_Op<mnemonic, [SameOperandsAndResultElementType,
                       DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "2-D " # what # " pooling, NHWC";
  let description = [{
    Pools `[N,H,W,C]` over `window` with `strides` (Keras's default strides
    equal the window). Padded elements are ignored: max skips them, average
    divides by the count of real elements in the window.

    ```mlir
    %p = kc.}] # mnemonic # [{ %x {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x, DenseI64ArrayAttr:$window,
                       DenseI64ArrayAttr:$strides, Kc_PaddingDefault:$padding);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

def Kc_MaxPool2DOp : Kc_PoolOp<"max_pool2d", "max">;
def Kc_AvgPool2DOp : Kc_PoolOp<"avg_pool2d", "average">;

def Kc_MaxPool2DGradOp : Kc_Op<"max_pool2d_grad",
    [SameOperandsAndResultElementType]> {
  let summary = "gradient of max_pool2d";
  let description = [{
    Routes each window's output gradient to the first maximum of the
    pooled input `x`; the result has `x`'s shape.

    ```mlir
    %dx = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32>, tensor<8x13x13x32xf32> -> tensor<8x26x26x32xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x, Kc_FloatTensor:$grad_output,
                       DenseI64ArrayAttr:$window, DenseI64ArrayAttr:$strides,
                       Kc_PaddingDefault:$padding);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $grad_output attr-dict `:` type($x) `,` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_AvgPool2DGradOp : Kc_Op<"avg_pool2d_grad",
    [SameOperandsAndResultElementType]> {
  let summary = "gradient of avg_pool2d";
  let description = [{
    Spreads each window's output gradient evenly over the window's real
    elements; the result type is the pooled input's.

    ```mlir
    %dx = kc.avg_pool2d_grad %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x13x13x32xf32> -> tensor<8x26x26x32xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$grad_output, DenseI64ArrayAttr:$window,
                       DenseI64ArrayAttr:$strides, Kc_PaddingDefault:$padding);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $grad_output attr-dict `:` type($grad_output) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_RandomUniformOp : Kc_Op<"random_uniform"> {
  let summary = "counter-based uniform [0, 1) numbers";
  let description = [{
    A pure function of `seed`, the scalar `counter` operand (the training
    step) and the element index, so the interpreter, eager mode and compiled
    code draw the same dropout masks and the op is safe to CSE.

    ```mlir
    %u = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<32x128xf32>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I64]>:$counter, I64Attr:$seed);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$counter attr-dict `:` type($counter) `->` type($result)";
}

def Kc_AllReduceOp : Kc_Op<"all_reduce", [SameOperandsAndResultType,
    DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "sum or mean of a tensor over the ranks of a data-parallel job";
  let description = [{
    Every rank passes its own `x` and gets the elementwise sum (or mean) of
    all ranks' `x`: kc-build-train-step's `data-parallel` option puts one on
    each gradient, between the reverse sweep and the optimizer, so every
    rank applies the same update; a synchronized BatchNormalization takes
    the global batch's statistics with it. In a single process it is the
    identity. Each rank differentiates its own loss, and every rank's result
    depends on every rank's `x`, so the gradient of `x` is the same
    reduction of the ranks' result gradients.
    Compiled code calls `kcc_rt_all_reduce_*` (MPI_Allreduce), and so does
    the interpreter, so both reduce in the same order.

    ```mlir
    %g = kc.all_reduce "mean" %dw : tensor<784x128xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x, StrAttr:$reduction);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$reduction $x attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kc_AllReduceStartOp : Kc_Op<"all_reduce_start", [SameOperandsAndResultType]> {
  let summary = "starts the sum or mean of a gradient bucket over the ranks";
  let description = [{
    Starts a non-blocking all-reduce of `bucket`, a rank-1 tensor that packs
    several gradients (kc.concat of their flattened values), and returns the
    buffer being reduced: its contents are defined only once
    `kc.all_reduce_wait` on it returns. kc-build-train-step emits one as soon
    as the backward has produced the bucket's last gradient, so the exchange
    overlaps the rest of the backward (Horovod's tensor fusion, PyTorch DDP's
    buckets). Compiled code and the interpreter both call
    `kcc_rt_all_reduce_start_*` (MPI_Iallreduce in place); in a single
    process it is a copy.

    ```mlir
    %b = kc.all_reduce_start "mean" %packed : tensor<1290xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$bucket, StrAttr:$reduction);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$reduction $bucket attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Kc_AllReduceWaitOp : Kc_Op<"all_reduce_wait", [SameOperandsAndResultType]> {
  let summary = "waits for a bucket's all-reduce and returns the reduced values";
  let description = [{
    `bucket` must be the result of a `kc.all_reduce_start` with the same
    reduction; the wait returns the reduced bucket (divided by the number of
    ranks for "mean"). kc-build-train-step places the waits just before the
    optimizer and slices each gradient back out of the result.

    ```mlir
    %r = kc.all_reduce_wait "mean" %b : tensor<1290xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$bucket, StrAttr:$reduction);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$reduction $bucket attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // KC_NN_OPS_TD
