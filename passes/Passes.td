//===- Passes.td - kc-level passes -*- tablegen -*-===//
//
// Every pass has a kc- prefix. No `constructor`: tablegen generates
// createXPass() and its options struct.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_PASSES_TD
#define KCC_PASSES_TD

include "mlir/Pass/PassBase.td"

def KcBuildTrainStep : Pass<"kc-build-train-step", "mlir::ModuleOp"> {
  let summary = "Builds @train_step (forward, loss, gradients, optimizer "
                "update) from @forward";
  let description = [{
    Turns the traced `@forward(%params..., %x [, %step])` into one function
    that performs a whole training step, so every later stage (fusion, memory
    planning, codegen, the interpreter) sees forward, backward and update as
    one graph:

    ```mlir
    func.func @train_step(%params..., %opt_state..., %iterations: tensor<i64>,
                          %lr: tensor<f32>, %x, %y)
        -> (loss, metrics..., new params..., new opt_state..., new iterations)
    ```

    The forward body is cloned (its `{kc.step}` counter, if any, is fed by
    `%iterations`, so dropout draws a new mask each step), the loss is
    appended with Keras 3 semantics (mean over the batch), `kcc::buildGradients`
    differentiates it with respect to the params marked `{kc.trainable = true}`
    and the optimizer update follows (Keras 3 formulas, with its gradient
    clipping and weight decay). Non-trainable params
    get no gradient and are returned unchanged. The learning rate is a runtime
    scalar operand, or, with `lr-schedule`, a function of `%iterations`
    computed in the step: neither recompiles.

    Arguments and results carry `kc.name` (`dense/kernel`,
    `adam/momentum/dense/kernel`, `iterations`, `loss`, `accuracy`, ...) and the
    function carries `kc.train_step = {params, optimizer_state, metrics, ...}`
    so a runtime can bind values by position. `@forward` stays in the module
    for inference.

    Labels: `sparse_categorical_crossentropy` takes i32 class indices of the
    prediction's shape minus its last dim; the other losses take targets of
    the prediction's type.
  }];
  let dependentDialects = ["::kcc::kc::KcDialect", "::mlir::func::FuncDialect"];
  // The defaults are TrainingConfig's (Keras 3's), named rather than
  // repeated so they are written once.
  // Declared here, not as members of the pass: the generated base class
  // leaves them out of clonePass()'s copy (they cannot be copied in builds
  // with LLVM statistics enabled).
  let statistics = [
    Statistic<"numTrainable", "trainable-params",
              "Parameters given a gradient and an update">,
    Statistic<"numFrozen", "frozen-params",
              "Non-trainable parameters passed through">,
  ];
  let options = [
    Option<"loss", "loss", "std::string",
           /*default=*/"::kcc::lossName(::kcc::LossConfig().kind).str()",
           "a Keras loss by name, with its arguments as `huber(delta=2)` "
           "(kcc::LossConfig::str's form: any of keras.losses), or one of "
           "custom-objects">,
    Option<"fromLogits", "from-logits", "bool",
           /*default=*/"::kcc::LossConfig().fromLogits",
           "the prediction is logits (stable log_softmax / log_sigmoid form) "
           "instead of probabilities (clipped to [1e-7, 1 - 1e-7])">,
    Option<"optimizer", "optimizer", "std::string",
           /*default=*/"::kcc::optimizerName(::kcc::OptimizerConfig().kind)"
                       ".str()",
           "sgd | adam | rmsprop | adamw | adagrad | nadam | adamax | lion">,
    Option<"momentum", "momentum", "double",
           /*default=*/"::kcc::OptimizerConfig().momentum",
           "momentum of sgd and rmsprop (0 = none, no state)">,
    Option<"nesterov", "nesterov", "bool",
           /*default=*/"::kcc::OptimizerConfig().nesterov",
           "Nesterov momentum for sgd">,
    Option<"beta1", "beta1", "double",
           /*default=*/"::kcc::OptimizerConfig().beta1",
           "adam, adamw, nadam, adamax, lion: decay of the first moment">,
    Option<"beta2", "beta2", "double", /*default=*/"-1",
           "adam, adamw, nadam, adamax, lion: decay of the second moment "
           "(-1: Keras's default for the optimizer, 0.999, lion 0.99)">,
    Option<"epsilon", "epsilon", "double",
           /*default=*/"::kcc::OptimizerConfig().epsilon",
           "adam, adamw, rmsprop, adagrad, nadam, adamax: denominator fuzz">,
    Option<"rho", "rho", "double", /*default=*/"::kcc::OptimizerConfig().rho",
           "rmsprop: decay of the squared-gradient average">,
    Option<"amsgrad", "amsgrad", "bool",
           /*default=*/"::kcc::OptimizerConfig().amsgrad",
           "adam, adamw: AMSGrad (the running maximum of the velocity)">,
    Option<"centered", "centered", "bool",
           /*default=*/"::kcc::OptimizerConfig().centered",
           "rmsprop: centered (the variance rather than the second moment)">,
    Option<"initialAccumulatorValue", "initial-accumulator-value", "double",
           /*default=*/"::kcc::OptimizerConfig().initialAccumulatorValue",
           "adagrad: the accumulator's starting value">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1",
           "w -= w * weight_decay * lr before each update, any optimizer "
           "(-1: Keras's default, adamw 0.004, else none)">,
    Option<"clipnorm", "clipnorm", "double",
           /*default=*/"::kcc::OptimizerConfig().clipnorm",
           "clip each gradient to this L2 norm (0 = off)">,
    Option<"clipvalue", "clipvalue", "double",
           /*default=*/"::kcc::OptimizerConfig().clipvalue",
           "clip each gradient element to [-v, v] (0 = off)">,
    Option<"globalClipnorm", "global-clipnorm", "double",
           /*default=*/"::kcc::OptimizerConfig().globalClipnorm",
           "clip all gradients together to this global norm (0 = off)">,
    Option<"lrSchedule", "lr-schedule", "std::string", /*default=*/"",
           "a learning-rate schedule computed from %iterations, e.g. "
           "ExponentialDecay(initial_learning_rate=0.1,decay_steps=100,"
           "decay_rate=0.5) (no spaces); empty: the %lr argument">,
    Option<"sampleWeight", "sample-weight", "bool", /*default=*/"false",
           "take per-example weights (f32[batch]) after the target and "
           "reduce the loss and metrics with them as Keras does">,
    Option<"dataParallel", "data-parallel", "bool", /*default=*/"false",
           "average every gradient over the ranks of a data-parallel job "
           "(kc.all_reduce_start/wait in buckets) before the optimizer "
           "uses it">,
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"::kcc::TrainingConfig().bucketBytes",
           "data-parallel: the most bytes of gradients one all-reduce "
           "carries; each bucket starts as soon as the backward produced it">,
    ListOption<"metrics", "metrics", "std::string",
               "metrics computed in the step: accuracy (resolved from the "
               "loss as Keras does), sparse_categorical_accuracy, "
               "categorical_accuracy, binary_accuracy">,
    ListOption<"customObjects", "custom-objects", "std::string",
               "losses and metrics the module defines as functions "
               "(kcc::customFunctionSymbol: `(y_true, y_pred) -> values`, "
               "one per output that uses it); `loss`, `metrics` and "
               "`outputs` may name them">,
    ListOption<"outputs", "outputs", "std::string",
               "a model with several outputs: one NAME:LOSS:WEIGHT:"
               "FROM_LOGITS[:METRIC...] per @forward result, in order "
               "(loss, from-logits and metrics are then unused); the step "
               "takes one target per output and returns the weighted sum "
               "of their losses, each output's loss and its metrics">,
  ];
}

def KcPoolBeforeActivation
    : Pass<"kc-pool-before-activation", "mlir::ModuleOp"> {
  let summary = "Max-pools before a relu instead of after it";
  let description = [{
    A Keras `Conv2D(activation="relu")` followed by `MaxPooling2D` traces to
    `max_pool2d(relu(conv + b))`. relu is monotone non-decreasing and keeps
    NaN, so it commutes with a window's maximum bit for bit (a NaN window
    stays NaN, one whose maximum is not positive becomes 0):

    ```mlir
    %h = kc.relu %s : tensor<8x26x26x32xf32>
    %p = kc.max_pool2d %h {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
    // becomes
    %q = kc.max_pool2d %s {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<8x26x26x32xf32> -> tensor<8x13x13x32xf32>
    %p = kc.relu %q : tensor<8x13x13x32xf32>
    ```

    Run on the forward before the training step is built, it moves relu and
    its gradient mask from the convolution's output to the pooled tensor (a
    quarter of it for 2x2 windows) in the compiled step and the interpreter
    alike, and leaves the convolution the bias alone as its epilogue, so
    the library call needs no separate NaN-keeping relu pass over its
    output. The gradients agree too: a window whose maximum is not positive
    gets none either way, and one with a positive maximum routes it to the
    same first maximum, which relu does not move. A relu with other uses
    (a model output, or a training step's gradient, which reads it) stays,
    and so does one on anything but a convolution (with or without its
    bias): batch normalization's relu, say, costs nothing in the kernel
    that computes its input.
  }];
  let dependentDialects = ["::kcc::kc::KcDialect"];
  let statistics = [
    Statistic<"numSwapped", "swapped", "max_pool2d ops moved before a relu">,
  ];
}

#endif // KCC_PASSES_TD
