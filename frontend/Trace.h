//===- Trace.h - Tracing layer calls into a kc function ---------*- C++ -*-===//
//
// While a TraceContext is active, ops on traced tensors append kc ops at its
// builder's insertion point. traceForward uses it to turn a whole model into
//
//   func.func @forward(%params..., %x [, %step]) -> %y
//
// with one argument per parameter (arg attributes {kc.name = "dense/kernel",
// kc.trainable = true}), one per model input ({kc.input = i}) and, when
// training a model with randomness (Dropout), a trailing rank-0 i64 step
// counter ({kc.step}). A training-mode trace in which layers assign weights
// (BatchNormalization's moving statistics) returns each new value after the
// prediction, marked {kc.updates = i} with i the weight's argument. The
// A training-mode trace of a model with regularizers returns, last, the
// sum of the weight penalties (trainable weights only) and activity
// penalties, marked {kc.added_loss}; kc-build-train-step adds it to the
// loss. Before it, a training-mode trace returns the Keras mask of each
// masked prediction k, marked {kc.output_mask = k}, which that
// prediction's loss and metrics apply. The
// parameters come in the order of
// Model::parameters(), so the interpreter and the compiler can be fed
// directly from it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRACE_H
#define KCC_FRONTEND_TRACE_H

#include "frontend/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/DenseMap.h"

namespace kcc {

class Model;
struct Weight;

/// The element type of `dtype` in `ctx`.
mlir::Type toMlirType(mlir::MLIRContext *ctx, DType dtype);
mlir::RankedTensorType toTensorType(mlir::MLIRContext *ctx, const Shape &shape,
                                    DType dtype);

/// RAII: makes `builder` the target of traced ops on this thread until
/// destroyed. Contexts nest; the innermost wins.
class TraceContext {
public:
  explicit TraceContext(mlir::OpBuilder &builder);
  ~TraceContext();
  TraceContext(const TraceContext &) = delete;
  TraceContext &operator=(const TraceContext &) = delete;

  /// The active context, or null outside tracing.
  static TraceContext *current();

  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext *context() { return builder_.getContext(); }
  /// loc("layer_name") for the current layer scope, else an unknown loc.
  mlir::Location location();

  /// Makes `weight` appear as `value` (a function argument) in traced
  /// layer calls. Unbound weights are embedded as kc.constant.
  void bindWeight(const Weight *weight, const Tensor &value);
  /// The bound tensor, or null.
  const Tensor *lookupWeight(const Weight *weight) const;
  /// Records `value` as the new value of the bound `weight` (a training-mode
  /// statistic such as BatchNormalization's moving mean); a later
  /// assignment of the same weight replaces it. Unbound weights are
  /// ignored: they are constants of the traced function.
  void assignWeight(const Weight *weight, const Tensor &value);
  /// The new value recorded for `weight`, or null.
  const Tensor *lookupAssignment(const Weight *weight) const;
  /// Records a rank-0 term of the training loss (an activity penalty).
  void addLoss(const Tensor &term) { losses_.push_back(term); }
  const std::vector<Tensor> &addedLosses() const { return losses_; }

private:
  mlir::OpBuilder &builder_;
  TraceContext *previous_;
  llvm::DenseMap<const Weight *, Tensor> weights_;
  llvm::DenseMap<const Weight *, Tensor> assignments_;
  std::vector<Tensor> losses_;
};

struct TraceOptions {
  /// The static batch size of the traced function's input(s).
  int64_t batch = 32;
  /// Trace the training-mode forward pass (Dropout active, step argument).
  bool training = false;
  /// An inference trace also returns each masked prediction's Keras mask
  /// after the predictions, in the predictions' order and unmarked
  /// (evaluate() weighs the loss and metrics by them).
  bool outputMasks = false;
  /// The name of the function.
  std::string funcName = "forward";
};

/// Loads the dialects traced modules use (kc, func) into `ctx`.
void registerFrontendDialects(mlir::MLIRContext &ctx);

/// Traces `model` into a verified module holding one func.func (see above).
/// Throws kcc::Error when the model cannot be traced or the result does not
/// verify (with the MLIR diagnostics in the message).
mlir::OwningOpRef<mlir::ModuleOp>
traceForward(mlir::MLIRContext &ctx, Model &model,
             const TraceOptions &options = {});

} // namespace kcc

#endif // KCC_FRONTEND_TRACE_H
