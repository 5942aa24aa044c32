//===- KcElementwiseOps.td - elementwise, compare, select, cast -*- tablegen -*-===//
//
// Elementwise ops take operands of one shape: the frontend makes numpy
// broadcasting explicit with kc.broadcast_to, so every backend (kernels,
// linalg, fusion) sees identical shapes and autodiff sees where gradients
// must be summed.
//
//===----------------------------------------------------------------------===//

#ifndef KC_ELEMENTWISE_OPS_TD
#define KC_ELEMENTWISE_OPS_TD

include "ir/KcBase.td"

class Kc_BinaryOp<string mnemonic, string formula>
    : Kc_Op<mnemonic, [SameOperandsAndResultType, Elementwise,
                        DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "elementwise " # formula;
  let description = [{
    Computes `}] # formula # [{` element by element. Both operands and the
    result have one type; broadcast first with `kc.broadcast_to`.

    ```mlir
    %z = kc.}] # mnemonic # [{ %x, %y : tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$lhs, Kc_FloatTensor:$rhs);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def Kc_AddOp : Kc_BinaryOp<"add", "lhs + rhs">;
def Kc_SubOp : Kc_BinaryOp<"sub", "lhs - rhs">;
def Kc_MulOp : Kc_BinaryOp<"mul", "lhs * rhs">;
def Kc_DivOp : Kc_BinaryOp<"div", "lhs / rhs">;
def Kc_PowOp : Kc_BinaryOp<"pow", "lhs ^ rhs">;
def Kc_MaxOp : Kc_BinaryOp<"max", "max(lhs, rhs)">;
def Kc_MinOp : Kc_BinaryOp<"min", "min(lhs, rhs)">;

class Kc_UnaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : Kc_Op<mnemonic, !listconcat(traits, [SameOperandsAndResultType,
                                             Elementwise, DeclareOpInterfaceMethods<Kc_GradientOpInterface>])> {
  let summary = "elementwise " # formula;
  let description = [{
    Computes `}] # formula # [{` element by element.

    ```mlir
    %y = kc.}] # mnemonic # [{ %x : tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($result)";
}

def Kc_NegOp : Kc_UnaryOp<"neg", "-x">;
def Kc_ExpOp : Kc_UnaryOp<"exp", "exp(x)">;
def Kc_LogOp : Kc_UnaryOp<"log", "log(x)">;
def Kc_SqrtOp : Kc_UnaryOp<"sqrt", "sqrt(x)">;
def Kc_RsqrtOp : Kc_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def Kc_AbsOp : Kc_UnaryOp<"abs", "|x|">;
def Kc_ReluOp : Kc_UnaryOp<"relu", "max(x, 0)">;
def Kc_SigmoidOp : Kc_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Kc_TanhOp : Kc_UnaryOp<"tanh", "tanh(x)">;

def Kc_GeluOp : Kc_UnaryOp<"gelu", "x * Phi(x)"> {
  let description = [{
    Gaussian error linear unit. With `approximate` unset it is the exact
    `0.5 * x * (1 + erf(x / sqrt(2)))` (Keras's default); with it set, the
    tanh approximation `0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))`.

    ```mlir
    %y = kc.gelu %x {approximate = true} : tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kc_FloatTensor:$x,
                       DefaultValuedAttr<BoolAttr, "false">:$approximate);
}

def Kc_CompareOp : Kc_Op<"compare", [AllTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison to an i1 mask";
  let description = [{
    Compares two tensors of one type element by element and returns an i1
    tensor of the same shape.

    ```mlir
    %m = kc.compare gt, %x, %zero : tensor<32x128xf32> -> tensor<32x128xi1>
    ```
  }];
  let arguments = (ins Kc_CompareDirectionAttr:$direction,
                       Kc_AnyTensor:$lhs, Kc_AnyTensor:$rhs);
  let results = (outs Kc_BoolTensor:$result);
  let assemblyFormat = [{
    $direction `,` $lhs `,` $rhs attr-dict `:` type($lhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_SelectOp : Kc_Op<"select",
    [AllTypesMatch<["on_true", "on_false", "result"]>,
     DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "elementwise choice by an i1 mask";
  let description = [{
    `result[i] = cond[i] ? on_true[i] : on_false[i]`; the mask has the
    shape of the values.

    ```mlir
    %y = kc.select %m, %x, %zero : tensor<32x128xi1>, tensor<32x128xf32>
    ```
  }];
  let arguments = (ins Kc_BoolTensor:$cond, Kc_AnyTensor:$on_true,
                       Kc_AnyTensor:$on_false);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` type($cond) `,` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_CastOp : Kc_Op<"cast", [Elementwise, DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "elementwise element-type conversion";
  let description = [{
    Converts each element to the result's element type (floats round to
    nearest, float to int truncates toward zero, i1 is 0 or 1).

    ```mlir
    %y = kc.cast %x : tensor<32xi64> -> tensor<32xf32>
    ```
  }];
  let arguments = (ins Kc_AnyTensor:$x);
  let results = (outs Kc_AnyTensor:$result);
  let assemblyFormat = "$x attr-dict `:` type($x) `->` type($result)";
  let hasVerifier = 1;
}

#endif // KC_ELEMENTWISE_OPS_TD
