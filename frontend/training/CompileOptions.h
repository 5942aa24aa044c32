//===- CompileOptions.h - A TrainingConfig and losses written in C++ -*- C++
//-*-===//
//
// Keras's compile(loss=..., metrics=..., custom_objects=...): a
// TrainingConfig plus the losses and metrics the user wrote as C++
// functions of kcc::Tensors.
//
//   kcc::CompileOptions options;
//   options.customObjects["huber"] = {[](const kcc::Tensor &y,
//                                        const kcc::Tensor &p) {
//     kcc::Tensor d = kcc::ops::abs(p - y);
//     ...                                 // kcc ops, as in a layer
//     return kcc::ops::reduceMean(values, {-1});  // one value per example
//   }};
//   options.config.loss.custom = "huber";
//   options.config.metrics = {"huber", "mae"};
//   kcc::Trainer trainer(model, options);
//
// Each custom object the config names is traced, per output that uses it,
// into a function of the training module (customFunctionSymbol), which
// kc-build-train-step inlines into @train_step: the reverse sweep
// differentiates it like any other op, and the compiled and interpreted
// steps run it as part of the one step. evaluate() and the validation run
// the same function eagerly on the predictions.
//
// A `.keras` file whose compile_config names a registered Python function
// ("MyPackage>my_loss") trains once customObjects holds a C++ version under
// that name.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_COMPILEOPTIONS_H
#define KCC_FRONTEND_TRAINING_COMPILEOPTIONS_H

#include "config/TrainingConfig.h"
#include "frontend/Tensor.h"

#include "mlir/IR/BuiltinOps.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kcc {

/// A loss or a metric written in C++ (one entry of Keras's
/// custom_objects): y_true and y_pred to one value per example
/// ([batch] or [batch, ...]), or one scalar. A loss's values are reduced as
/// Keras reduces a loss function's (the weighted sum_over_batch_size); a
/// metric's are averaged, unweighted, as Keras's MeanMetricWrapper does.
struct CustomObject {
  using Fn = std::function<Tensor(const Tensor &yTrue, const Tensor &yPred)>;
  // Implicit: a function is a custom object taking the prediction's type.
  CustomObject(Fn fn = {}, std::optional<DType> targetDType = std::nullopt,
               std::optional<Shape> targetShape = std::nullopt) // NOLINT
      : fn(std::move(fn)), targetDType(targetDType),
        targetShape(std::move(targetShape)) {}

  Fn fn;
  /// A loss's y_true, its dtype and its shape without the batch (class
  /// indices: DType::I32 and the prediction's shape without its last dim).
  /// Unset: the prediction's. A metric takes its output's target.
  std::optional<DType> targetDType;
  std::optional<Shape> targetShape;
};

using CustomObjects = std::map<std::string, CustomObject>;

struct CompileOptions {
  // Implicit: a TrainingConfig is a compile without custom objects.
  CompileOptions(TrainingConfig config = {}) // NOLINT
      : config(std::move(config)) {}

  TrainingConfig config;
  /// By name: config.loss.custom (or an output's) and config.metrics (or an
  /// output's) may name these, as Keras's compile() takes functions.
  CustomObjects customObjects;

  /// `config` as the training step is built from it: customObjects listed
  /// in TrainingConfig::customObjects, and a custom loss's `kind` set to
  /// the built-in loss of the same target form (sparse categorical
  /// crossentropy for integer targets, categorical otherwise), against
  /// which its built-in metrics resolve ("accuracy" as Keras picks it).
  TrainingConfig resolvedConfig() const;
};

/// The y_true type output `k` is trained on for a prediction `pred`: the
/// custom loss's target, or the built-in loss's (passes/Losses.h).
mlir::RankedTensorType targetTypeOf(const CompileOptions &options,
                                    const LossConfig &loss,
                                    mlir::RankedTensorType pred);

/// Traces every custom object `options.config` names, for each output
/// that names it, into `module` (which holds the traced @forward) as the
/// private function kc-build-train-step inlines. Throws kcc::Error naming
/// the object when it does not trace (or returns no traced value).
void traceCustomObjects(mlir::ModuleOp module, const CompileOptions &options);

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_COMPILEOPTIONS_H
