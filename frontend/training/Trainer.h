//===- Trainer.h - compile() and fit() for frontend models ------*- C++ -*-===//
//
// Keras's compile/fit/evaluate for a kcc::Model, run by the interpreter:
//
//   kcc::Trainer trainer(model, {.optimizer = "adam",
//                                .loss = "sparse_categorical_crossentropy",
//                                .metrics = {"accuracy"}});
//   trainer.fit(data.train, {.epochs = 1, .batchSize = 32});
//   double acc = trainer.evaluate(data.test).at("accuracy");
//
// The model is traced once (training mode, static batch) and turned into
// @train_step by the train pipeline; the Trainer owns the params, the
// optimizer state and the step count between steps, feeds each batch to
// @train_step and writes the weights back into the model after each epoch.
// Inference (evaluate, predict) traces @forward without training.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_TRAINER_H
#define KCC_FRONTEND_TRAINING_TRAINER_H

#include "frontend/Model.h"
#include "runtime/data/Dataset.h"
#include "runtime/interpreter/Interpreter.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace kcc {

/// Keras's compile() arguments (defaults are Keras 3's).
struct CompileOptions {
  std::string optimizer = "adam";
  std::string loss = "sparse_categorical_crossentropy";
  std::vector<std::string> metrics;
  bool fromLogits = false;
  /// Unset: Keras's default for the optimizer (sgd 0.01, else 0.001).
  std::optional<double> learningRate;
  double momentum = 0.0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-7, rho = 0.9;
};

struct FitOptions {
  int64_t epochs = 1;
  int64_t batchSize = 32;
  bool shuffle = true;
  uint64_t seed = 0;
  /// 0 silent, 1 one line per epoch.
  int verbose = 1;
};

/// The means of one epoch's batch losses and metrics ("loss", "accuracy").
struct EpochLogs {
  std::map<std::string, double> values;
  int64_t steps = 0;
  double seconds = 0;
};

class Trainer {
public:
  /// Validates the options (throws kcc::Error on an unknown loss, optimizer
  /// or metric); compilation happens on the first fit().
  Trainer(Model &model, CompileOptions options);
  ~Trainer();

  /// Trains `epochs` epochs; returns one EpochLogs per epoch.
  std::vector<EpochLogs> fit(const Dataset &train, const FitOptions &fit = {});

  /// Accuracy of the model's predictions (argmax against integer labels)
  /// over all of `data`, computed with the inference @forward.
  std::map<std::string, double> evaluate(const Dataset &data,
                                         int64_t batchSize = 500);

  void setLearningRate(double lr) { learningRate_ = lr; }
  double learningRate() const { return learningRate_; }
  int64_t iterations() const { return iterations_; }
  /// What the interpreter dispatched and allocated so far.
  const InterpreterStats &stats() const;
  /// The compiled training module (@forward and @train_step), as text.
  std::string trainModuleText() const;

private:
  struct Compiled;
  void compileTrainStep(int64_t batchSize);
  Compiled &inferenceFunction(int64_t batchSize);

  Model &model_;
  CompileOptions options_;
  double learningRate_;
  int64_t iterations_ = 0;
  /// Declared before everything that holds IR, so it is destroyed last.
  std::unique_ptr<mlir::MLIRContext> context_;
  std::unique_ptr<Compiled> train_;
  std::map<int64_t, std::unique_ptr<Compiled>> inference_;
  std::vector<NDArray> params_, state_;
  std::unique_ptr<Interpreter> interpreter_;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_TRAINER_H
