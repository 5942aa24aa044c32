//===- LossConfig.h - A Keras loss and its arguments ------------*- C++ -*-===//
//
// keras.losses as plain data: which loss, its constructor arguments under
// their Keras names with Keras 3's defaults, and the reduction. The names
// Keras accepts (class names, function names and the aliases of
// keras.losses.get) are parsed here once, and the one-line text form that
// `kcc train --loss=` and kc-build-train-step's options carry is written and
// read here.
//
// Plain data and LLVM support only (no MLIR), so every layer can link it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CONFIG_LOSSCONFIG_H
#define KCC_CONFIG_LOSSCONFIG_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace kcc {

enum class LossKind {
  SparseCategoricalCrossentropy,
  CategoricalCrossentropy,
  BinaryCrossentropy,
  MeanSquaredError,
  MeanAbsoluteError,
  MeanAbsolutePercentageError,
  MeanSquaredLogarithmicError,
  Huber,
  LogCosh,
  Poisson,
  KLDivergence,
  CosineSimilarity,
  Hinge,
  SquaredHinge,
  CategoricalHinge,
  BinaryFocalCrossentropy,
  CategoricalFocalCrossentropy,
  Dice,
  Tversky,
  /// Connectionist temporal classification: integer label sequences
  /// [batch, N] (0 the blank) under logits [batch, steps, classes].
  CTC,
  /// (1 - p^q) / q of the target class's probability p (class indices).
  CategoricalGeneralizedCrossEntropy,
  /// A metric-learning loss over the batch's pairwise cosine similarities
  /// of embeddings, examples alike when their integer labels are equal.
  Circle,
};

/// Every built-in loss, in the order `kcc train --help` lists them.
llvm::ArrayRef<LossKind> allLosses();

/// Keras's Loss `reduction` of the per-example values (keras.losses.Loss).
enum class LossReduction {
  /// sum(values * w) / number of values (Keras's default).
  SumOverBatchSize,
  /// sum(values * w).
  Sum,
  /// As SumOverBatchSize (Keras 3 treats "mean" so).
  Mean,
  /// sum(values * w) / sum(w); without weights, the mean.
  MeanWithSampleWeight,
  /// The per-example values themselves: Keras cannot fit with them (the
  /// loss is not a scalar), so neither can kcc; kept to name it in errors.
  None,
};

/// "sparse_categorical_crossentropy" etc. (the name of the Keras function).
llvm::StringRef lossName(LossKind kind);
/// "SparseCategoricalCrossentropy" etc. (the Keras class).
llvm::StringRef lossClassName(LossKind kind);
/// The class's default `name` ("huber_loss" for Huber, else lossName).
llvm::StringRef lossDefaultInstanceName(LossKind kind);
/// The loss takes integer labels ([batch, ...], the prediction's shape
/// without its last axis) rather than targets of the prediction's shape:
/// sparse_categorical_crossentropy, categorical_generalized_cross_entropy,
/// circle.
bool lossTakesLabels(LossKind kind);

/// A loss by any name keras.losses.get accepts: the function name, the
/// class name, or an alias ("mse", "MAE", "kld", "bce", "log_cosh",
/// "logcosh", ...). The error lists the accepted names.
llvm::Expected<LossKind> parseLoss(llvm::StringRef name);

/// "sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none".
llvm::Expected<LossReduction> parseLossReduction(llvm::StringRef name);
llvm::StringRef lossReductionName(LossReduction reduction);

/// A loss; defaults are Keras 3's. Each argument is used by the losses
/// noted; the parsers refuse an argument its loss does not take.
struct LossConfig {
  LossKind kind = LossKind::SparseCategoricalCrossentropy;
  /// The prediction is logits rather than probabilities: the crossentropies
  /// and the focal ones.
  bool fromLogits = false;
  /// Targets pulled toward uniform: t (1 - s) + s / classes for the
  /// categorical ones, t (1 - s) + s / 2 for the binary ones.
  double labelSmoothing = 0.0;
  /// The class axis of the crossentropies (the axis the binary ones average
  /// over), CosineSimilarity's axis, the axis Dice and Tversky sum over.
  /// Unset: Keras's default (-1; for Dice and Tversky every axis).
  std::optional<int64_t> axis;
  /// SparseCategoricalCrossentropy: targets of this class count for
  /// nothing, and the mean is over the others.
  std::optional<int64_t> ignoreClass;
  double delta = 1.0; ///< Huber
  /// BinaryFocal (with apply_class_balancing), CategoricalFocal (0.25),
  /// Tversky (0.5). Unset: Keras's default for `kind`.
  std::optional<double> alpha;
  double beta = 0.5; ///< Tversky
  /// The focal losses (2), Circle's scale (80). Unset: Keras's default
  /// for `kind`.
  std::optional<double> gamma;
  double q = 0.5;             ///< CategoricalGeneralizedCrossEntropy
  double margin = 0.4;        ///< Circle
  bool removeDiagonal = true; ///< Circle: an example is not its own positive
  bool applyClassBalancing = false; ///< BinaryFocal
  LossReduction reduction = LossReduction::SumOverBatchSize;
  /// A custom loss, by the name it is registered under (Keras's
  /// "MyPackage>my_loss", or any name without ':'): one of
  /// TrainingConfig::customObjects, a function of the module (see
  /// customFunctionSymbol). `fromLogits` is then unused, and built-in
  /// metrics resolve against the target the function takes:
  /// sparse_categorical_crossentropy's for integer targets, else
  /// categorical_crossentropy's (kc-build-train-step reads it from the
  /// function; CompileOptions::resolvedConfig sets `kind` to it).
  std::string custom;

  /// `custom`, or the built-in loss's name.
  std::string name() const;

  /// alpha given, else Keras's default for `kind` (Tversky 0.5, else 0.25).
  double resolvedAlpha() const;
  /// gamma given, else Keras's default for `kind` (Circle 80, else 2).
  double resolvedGamma() const;
  /// axis given, else -1; for Dice and Tversky unset means every axis.
  std::optional<int64_t> resolvedAxis() const;

  /// The one-line text form: the name alone when every argument has its
  /// default, else e.g. `huber(delta=2)` or
  /// `binary_focal_crossentropy(gamma=3,from_logits=true)` (no spaces; only
  /// arguments that differ from the defaults). How `kcc train --loss=` and
  /// kc-build-train-step's `loss` option take a loss.
  std::string str() const;
  /// Parses str()'s form with any name parseLoss accepts. A name that is
  /// no built-in loss without arguments is kept as `custom` when
  /// `allowCustom`. An argument the loss does not take is an error naming
  /// it and listing those it takes.
  static llvm::Expected<LossConfig> parse(llvm::StringRef text,
                                          bool allowCustom = false);

  /// Sets the argument `key` (Keras's name: "delta", "from_logits", ...)
  /// from its text; fails on a key `kind` does not take or a bad value.
  llvm::Error setArgument(llvm::StringRef key, llvm::StringRef value);
  /// The Keras names of the arguments `kind` takes, reduction last.
  static llvm::ArrayRef<llvm::StringRef> argumentNames(LossKind kind);

  /// Keras's constructor checks (label_smoothing in [0, 1], delta > 0 ...)
  /// and kcc's limits (reduction "none"), the message naming the field.
  llvm::Error validate() const;
};

} // namespace kcc

#endif // KCC_CONFIG_LOSSCONFIG_H
