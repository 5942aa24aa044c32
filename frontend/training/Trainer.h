//===- Trainer.h - compile() and fit() for frontend models ------*- C++ -*-===//
//
// Keras's compile/fit/evaluate for a kcc::Model, compiled or interpreted:
//
//   kcc::TrainingConfig config;
//   config.metrics = {"accuracy"};
//   kcc::Trainer trainer(model, config);     // compiled (config.mode)
//   trainer.fit(data.train, {.epochs = 1, .batchSize = 32});
//   double acc = trainer.evaluate(data.test).at("accuracy");
//
// fit() builds (kcc::jit) one Executable per batch size (fit()'s, not
// TrainingConfig::batch): the model traced in training mode, turned into
// @train_step by the train pipeline, run compiled or by the interpreter
// (TrainingConfig::mode). The Executable owns the params, the optimizer
// state and the step count between steps; the Trainer feeds it batches and
// writes the weights back into the model after each epoch. evaluate() runs
// an inference-only Executable (@forward).
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_TRAINER_H
#define KCC_FRONTEND_TRAINING_TRAINER_H

#include "frontend/Model.h"
#include "passes/TrainingConfig.h"
#include "runtime/data/Dataset.h"
#include "engine/Executable.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kcc {

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
  /// Validates `config` (throws kcc::Error naming what is wrong);
  /// compilation happens on the first fit(). Compiles are reported to `log`
  /// (null is silent).
  Trainer(Model &model, TrainingConfig config,
          llvm::raw_ostream *log = &llvm::errs());
  ~Trainer();

  /// Trains `epochs` epochs; returns one EpochLogs per epoch.
  std::vector<EpochLogs> fit(const Dataset &train, const FitOptions &fit = {});

  /// Accuracy of the model's predictions (argmax against integer labels)
  /// over all of `data`, computed with the inference @forward.
  std::map<std::string, double> evaluate(const Dataset &data,
                                         int64_t batchSize = 500);

  void setLearningRate(double lr);
  double learningRate() const { return learningRate_; }
  int64_t iterations() const;
  /// The training Executable's stats; in interpreted mode the dispatch and
  /// allocation totals include evaluate()'s runs (peak: the largest).
  ExecStats stats() const;
  /// The training module (@forward and @train_step), as text.
  std::string trainModuleText() const;
  /// The training Executable of the last fit(), or null before one.
  Executable *executable() { return train_.get(); }

private:
  void prepareTrainStep(int64_t batchSize);

  Model &model_;
  TrainingConfig config_;
  llvm::raw_ostream *log_;
  double learningRate_;
  std::unique_ptr<Executable> train_;
  std::map<int64_t, std::unique_ptr<Executable>> inference_;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_TRAINER_H
