//===- KcRecurrenceOps.td - recurrent cells over time -*- tablegen -*-===//
//
// LSTM, GRU and SimpleRNN as one op over the whole sequence, so the module
// does not grow with the number of steps: compiled code lowers it to a loop
// over time (one step a call), the gradient is the reverse loop over the
// states the forward saved. The input projection is not part of it: the
// layers compute x.W + b for every step as one GEMM first.
//
//===----------------------------------------------------------------------===//

#ifndef KC_RECURRENCE_OPS_TD
#define KC_RECURRENCE_OPS_TD

include "ir/KcBase.td"
include "ir/KcInterfaces.td"

defvar Kc_RecurrenceAttrs = (ins StrAttr:$cell,
    DefaultValuedAttr<BoolAttr, "true">:$reset_after,
    DefaultValuedAttr<StrAttr, "\"tanh\"">:$activation,
    DefaultValuedAttr<StrAttr, "\"sigmoid\"">:$recurrent_activation,
    DefaultValuedAttr<BoolAttr, "false">:$reverse);

def Kc_RecurrenceOp : Kc_Op<"recurrence",
    [SameOperandsAndResultElementType,
     DeclareOpInterfaceMethods<Kc_GradientOpInterface>]> {
  let summary = "a recurrent cell run over every step of a sequence";
  let description = [{
    `cell` is `lstm`, `gru` or `simple_rnn`, with Keras's gate order (LSTM
    i, f, c, o; GRU z, r, h), `activation` and `recurrent_activation` among
    tanh, sigmoid, relu, linear and hard_sigmoid, `reset_after` GRU's.
    Time-major, with T steps, B examples, H units, G gates (4, 3, 1):
    `x` `[T, B, G*H]` is the input projection `x.W + b`, `kernel` `[H, G*H]`
    the recurrent kernel, `initial_state` `[B, K*H]` the state before the
    first step (LSTM `[h | c]`, K = 2; else h), `recurrent_bias` `[G*H]` a
    bias added to `h.U` (GRU with reset_after; zeros otherwise).

    The result `[T, B, S]` holds one row per step in processing order (with
    `reverse`, Keras's go_backwards, step s reads x row T-1-s): the output h
    first (columns `[0, H)`), then what the gradient needs: LSTM c then the
    four gate activations (S = 6H), GRU z, r, the candidate and, with
    reset_after, the candidate's `h.U + b` (S = 5H, else 4H), SimpleRNN
    nothing more (S = H). LSTM's cell state is columns `[H, 2H)`.

    ```mlir
    %s = kc.recurrence %x, %u, %h0, %b {cell = "lstm"} : tensor<40x32x48xf32>, tensor<12x48xf32>, tensor<32x24xf32>, tensor<48xf32> -> tensor<40x32x72xf32>
    ```
  }];
  let arguments = !con((ins Kc_FloatTensor:$x, Kc_FloatTensor:$kernel,
                            Kc_FloatTensor:$initial_state,
                            Kc_FloatTensor:$recurrent_bias),
                       Kc_RecurrenceAttrs);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $x `,` $kernel `,` $initial_state `,` $recurrent_bias attr-dict `:` type($x) `,` type($kernel) `,` type($initial_state) `,` type($recurrent_bias) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Kc_RecurrenceGradOp : Kc_Op<"recurrence_grad",
    [SameOperandsAndResultElementType]> {
  let summary = "the gradient of kc.recurrence (backpropagation through time)";
  let description = [{
    From the forward's `kernel`, `initial_state`, its result `states` and
    the gradient of that result `grad_states` (both `[T, B, S]`), the
    gradients of the forward's operands, packed into one 1-D result in
    operand order: `x` (`T*B*G*H`), `kernel` (`H*G*H`), `initial_state`
    (`B*K*H`), `recurrent_bias` (`G*H`). Attributes as the forward's.

    ```mlir
    %g = kc.recurrence_grad %u, %h0, %s, %ds {cell = "lstm"} : tensor<12x48xf32>, tensor<32x24xf32>, tensor<40x32x72xf32>, tensor<40x32x72xf32> -> tensor<62784xf32>
    ```
  }];
  let arguments = !con((ins Kc_FloatTensor:$kernel,
                            Kc_FloatTensor:$initial_state,
                            Kc_FloatTensor:$states,
                            Kc_FloatTensor:$grad_states),
                       Kc_RecurrenceAttrs);
  let results = (outs Kc_FloatTensor:$result);
  let assemblyFormat = [{
    $kernel `,` $initial_state `,` $states `,` $grad_states attr-dict `:` type($kernel) `,` type($initial_state) `,` type($states) `,` type($grad_states) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // KC_RECURRENCE_OPS_TD
