//===- KcBase.td - kc dialect definition, enums, type constraints -*- tablegen -*-===//
//
// The kc dialect is kcc's tensor-level IR: in the spirit of StableHLO and
// TOSA, ops are tensor math (matmul, elementwise, reductions, convolution),
// not Keras layers. Dense is matmul + add + activation, so fusion has real
// work to do. Shapes are static; broadcasting is explicit (kc.broadcast_to).
//
//===----------------------------------------------------------------------===//

#ifndef KC_BASE_TD
#define KC_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "ir/KcInterfaces.td"

def Kc_Dialect : Dialect {
  let name = "kc";
  let cppNamespace = "::kcc::kc";
  let summary = "kcc's tensor-level dialect for Keras-style models";
  let description = [{
    Tensor-level ops with static shapes over f32, f64, f16 and bf16 (i1, i32
    and i64 for masks, labels and indices). Traced from the C++ layer API and
    imported from Keras specs; the train-step, fusion and memory-planning
    passes work on it before it is lowered to linalg.

    Passes and runtimes annotate functions, their arguments and results, and
    loops with discardable `kc.*` attributes, declared in `discardableAttrs`
    and verified by the dialect (type, value and place):

    | attribute | on | value |
    |-----------|----|-------|
    | `kc.name` | argument, result | string: parameter or optimizer slot name |
    | `kc.trainable` | argument | bool: the optimizer updates it |
    | `kc.input`, `kc.target` | argument | index of the model input / target |
    | `kc.step`, `kc.arena` | argument | unit: step counter / memory arena |
    | `kc.updates` | result | integer: the argument (a non-trainable parameter) this result is the new value of |
    | `kc.added_loss` | result | unit: a scalar the training loss adds (Keras's `model.losses`: regularizers) |
    | `kc.output_mask` | result | integer: the prediction whose Keras mask (0/1, its loss and metrics count only the real steps) this result is |
    | `kc.train_step` | function | dictionary: loss, optimizer, params, ... |
    | `kc.num_inputs` | function | integer: arguments before out-params |
    | `kc.update_candidates`, `kc.in_place` | function | i64 array of (result, argument) pairs |
    | `kc.kernels`, `kc.library_calls`, `kc.loop_nests` | function | integer counts |
    | `kc.arena_bytes`, `kc.arena_lower_bound`, `kc.arena_sum`, `kc.arena_buffers` | function | integer: the memory plan |
    | `kc.cold` | function | unit: little work per call, machine code emitted unoptimized (kc-mark-cold-functions) |
    | `kc.fusion` | loop | dictionary: kind, ops, layers, local_bytes |
    | `kc.parallel` | loop | unit: independent iterations |
    | `kc.precision` | `kc.cast` | string: why a layer computes in another precision from there (a mixed policy's float32 parts, as Keras) |
  }];
  let useDefaultAttributePrinterParser = 1;

  // The discardable `kc.*` attributes that passes and runtimes put on
  // functions, their arguments and results, and loops. Declared here once:
  // tablegen generates a `XAttrHelper` per entry, whose `getNameStr()` is the
  // attribute's one spelling and whose `getAttr` return type is the type the
  // verifier (KcDialect.cpp) checks. ir/KcAttributes.h decodes them.
  let discardableAttrs = (ins
    // Arguments and results of a traced or built function.
    "::mlir::StringAttr":$name,        // arg/result: parameter or slot name
    "::mlir::BoolAttr":$trainable,     // arg: a parameter the optimizer updates
    "::mlir::IntegerAttr":$input,      // arg: the model input's index
    "::mlir::IntegerAttr":$target,     // arg: the training target's index
    "::mlir::UnitAttr":$step,          // arg: the dropout step counter
    "::mlir::UnitAttr":$arena,         // arg: the planned memory arena
    "::mlir::IntegerAttr":$updates,    // result: new value of this argument
    "::mlir::UnitAttr":$added_loss,    // result: a term of the training loss
    "::mlir::IntegerAttr":$output_mask, // result: the mask of this prediction
    // Functions.
    "::mlir::DictionaryAttr":$train_step,  // the train step's layout
    "::mlir::IntegerAttr":$num_inputs,     // arguments before the out-params
    "::mlir::DenseI64ArrayAttr":$update_candidates, // (result, arg) pairs
    "::mlir::DenseI64ArrayAttr":$in_place,          // proven (result, arg) pairs
    "::mlir::IntegerAttr":$kernels,
    "::mlir::IntegerAttr":$library_calls,
    "::mlir::IntegerAttr":$loop_nests,
    "::mlir::IntegerAttr":$arena_bytes,
    "::mlir::IntegerAttr":$arena_lower_bound,
    "::mlir::IntegerAttr":$arena_sum,
    "::mlir::IntegerAttr":$arena_buffers,
    "::mlir::UnitAttr":$cold,              // machine code unoptimized
    // Loops.
    "::mlir::DictionaryAttr":$fusion,  // the fusion group a loop nest holds
    "::mlir::UnitAttr":$parallel,      // iterations are independent
    // Ops.
    "::mlir::StringAttr":$precision    // kc.cast: why a layer changes
                                       // precision there (mixed policies)
  );
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Kc_Padding : I32EnumAttr<"Padding", "window padding (TF/Keras rule)", [
    I32EnumAttrCase<"Valid", 0, "valid">,
    I32EnumAttrCase<"Same", 1, "same">]> {
  let cppNamespace = "::kcc::kc";
  let genSpecializedAttr = 0;
}
def Kc_PaddingAttr : EnumAttr<Kc_Dialect, Kc_Padding, "padding">;

def Kc_CompareDirection : I32EnumAttr<"CompareDirection",
    "elementwise comparison", [
    I32EnumAttrCase<"EQ", 0, "eq">, I32EnumAttrCase<"NE", 1, "ne">,
    I32EnumAttrCase<"LT", 2, "lt">, I32EnumAttrCase<"LE", 3, "le">,
    I32EnumAttrCase<"GT", 4, "gt">, I32EnumAttrCase<"GE", 5, "ge">]> {
  let cppNamespace = "::kcc::kc";
  let genSpecializedAttr = 0;
}
def Kc_CompareDirectionAttr : EnumAttr<Kc_Dialect, Kc_CompareDirection, "cmp">;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Kc_Float : AnyTypeOf<[F32, F64, F16, BF16]>;
def Kc_Int : AnyTypeOf<[I32, I64]>;
def Kc_FloatTensor : StaticShapeTensorOf<[F32, F64, F16, BF16]>;
def Kc_IntTensor : StaticShapeTensorOf<[I32, I64]>;
def Kc_BoolTensor : StaticShapeTensorOf<[I1]>;
def Kc_AnyTensor : StaticShapeTensorOf<[F32, F64, F16, BF16, I1, I32, I64]>;

//===----------------------------------------------------------------------===//
// Base op
//===----------------------------------------------------------------------===//

// Every kc op is side-effect free (randomness is a pure function of a seed
// and a counter operand), so CSE and DCE apply to the whole dialect.
class Kc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Kc_Dialect, mnemonic, !listconcat(traits, [Pure])>;

#endif // KC_BASE_TD
