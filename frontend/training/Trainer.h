//===- Trainer.h - compile(), fit() and evaluate() for models ---*- C++ -*-===//
//
// Keras's compile/fit/evaluate for a kcc::Model, compiled or interpreted:
//
//   kcc::TrainingConfig config;
//   config.metrics = {"accuracy"};
//   kcc::Trainer trainer(model, config);     // compiled (config.mode)
//   kcc::FitOptions fit;
//   fit.epochs = 5;
//   fit.callbacks = {std::make_shared<kcc::EarlyStopping>(...)};
//   kcc::History h = trainer.fit(data.train, fit, &data.test);
//   double acc = trainer.evaluate(data.test).at("accuracy");
//
// fit() is the one training loop of kcc (`kcc train` runs it): epochs of
// batches from a DataSource (Keras's Sequence; in-memory arrays and mapped
// .npy files are ArrayDataSources), read ahead by background workers while
// the step runs, with callbacks at every train/epoch/batch boundary,
// validation at each epoch's end ("val_loss", "val_<metric>") and a
// History returned.
//
// With TrainingConfig::dataParallel under an MPI launcher, fit()'s batch is
// the global batch: each rank trains on its slice (Distributed.h), starts
// from rank 0's weights and optimizer state, logs the ranks' mean loss and
// metrics, and only rank 0 shows the progress bar.
//
// Steps have a static batch, so the Trainer keeps one training Executable
// per batch size it meets: the full batches run on one, the last partial
// batch of an epoch (trained, as Keras does) on another compiled for its
// size. Both hold the same weights, optimizer state, step count and
// learning rate: switching copies them from the Executable that ran last
// (once or twice an epoch), so training with a partial batch gives what
// Keras computes. Between fits the model's weights are the truth (the user
// may set them). evaluate() and the validation run the inference @forward
// (Dropout off) and compute the loss and metrics from its predictions on
// the host, as Keras's evaluate() averages them over every example.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_TRAINING_TRAINER_H
#define KCC_FRONTEND_TRAINING_TRAINER_H

#include "config/TrainingConfig.h"
#include "engine/Executable.h"
#include "frontend/Model.h"
#include "frontend/training/Callbacks.h"
#include "frontend/training/CompileOptions.h"
#include "frontend/training/DataSource.h"
#include "runtime/data/Dataset.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kcc {

struct FitOptions {
  int64_t epochs = 1;
  /// The epoch to start at (Keras's initial_epoch): epochs initialEpoch ..
  /// epochs-1 run, and shuffling follows the epoch's number.
  int64_t initialEpoch = 0;
  int64_t batchSize = 32;
  /// Reshuffle the examples each epoch, from (seed, epoch). Applies to the
  /// Dataset overload; a DataSource orders its own batches.
  bool shuffle = true;
  uint64_t seed = 0;
  /// 0 silent, 1 a progress bar, 2 one line per epoch (Keras's verbose).
  int verbose = 1;
  /// Batches per epoch (0: every batch of the data). As Keras, an epoch
  /// continues the pass over the data where the previous one stopped; the
  /// epoch that reaches its end is cut short there, and the next starts a
  /// new pass (reshuffled).
  int64_t stepsPerEpoch = 0;
  /// Keras's validation_freq: validate after every validationFreq-th epoch,
  /// or, when validationEpochs is not empty, after those (1-based) epochs.
  int64_t validationFreq = 1;
  std::vector<int64_t> validationEpochs;
  /// The Dataset overload only: the last fraction of the examples, taken
  /// before shuffling, validates instead of training (Keras's
  /// validation_split; validation data, when given, overrides it).
  double validationSplit = 0;
  /// Batch size of the validation (0: batchSize).
  int64_t validationBatchSize = 0;
  /// Threads reading batches ahead of the step (0: none, read in the loop)
  /// and how many batches they may read ahead.
  int workers = 1;
  int prefetchDepth = 4;
  /// Called in order after the progress bar and before History.
  std::vector<CallbackPtr> callbacks;
  /// Where the progress bar goes (null: stdout).
  llvm::raw_ostream *progress = nullptr;
};

/// Checks `config.classWeight` against the classes `model` predicts (its
/// output's last dim; 2 for one sigmoid unit); the message starts
/// "class_weight: " and names the class.
llvm::Error checkClassWeight(Model &model, const TrainingConfig &config);

class Trainer {
public:
  /// Validates `options` (throws kcc::Error naming what is wrong);
  /// compilation happens on the first fit(). Compiles are reported to `log`
  /// (null is silent). A TrainingConfig converts: a compile without custom
  /// losses or metrics.
  Trainer(Model &model, CompileOptions options,
          llvm::raw_ostream *log = &llvm::errs());
  ~Trainer();

  /// Trains epochs of `train`, validating on `validation` (if given) at
  /// each epoch's end. Throws kcc::Error on data that does not fit the step
  /// (before any step runs when the first batch is wrong).
  History fit(DataSource &train, const FitOptions &fit = {},
              DataSource *validation = nullptr);
  /// In-memory examples: x cast to the model's input dtype, y to the
  /// step's target dtype; options.validationSplit applies.
  History fit(const Dataset &train, const FitOptions &fit = {},
              const Dataset *validation = nullptr);

  /// The loss and every metric of the model over all of `data`, computed
  /// from the inference @forward's predictions ("loss", "accuracy", ...;
  /// with several outputs "<output>_loss", "<output>_<metric>" too, as
  /// Keras logs them). The batches' sample weights weigh the loss as
  /// Keras's evaluate(x, y, sample_weight) does.
  /// A model of several inputs or outputs reads Batch::inputs/targets (an
  /// ArrayDataSource of one array per input and output); fit() as well.
  /// `callbacks` get Keras's on_test_* hooks (a batch's end: the running
  /// loss and metrics); a callback setting stopEvaluating ends it after
  /// the batch, with the result over the batches run.
  Logs evaluate(const DataSource &data,
                const std::vector<CallbackPtr> &callbacks = {});
  Logs evaluate(const Dataset &data, int64_t batchSize = 500,
                const std::vector<CallbackPtr> &callbacks = {});
  /// The inference @forward on `x`, any number of rows.
  NDArray predict(const NDArray &x, int64_t batchSize = 500);
  /// The same for several inputs (one array each): one array per output.
  /// With `callbacks`, batch by batch with Keras's on_predict_* hooks; a
  /// callback setting stopPredicting ends it after the batch, with the
  /// rows predicted so far.
  std::vector<NDArray> predict(const std::vector<NDArray> &inputs,
                               int64_t batchSize = 500,
                               const std::vector<CallbackPtr> &callbacks = {});
  /// One training step on one batch of any size (Keras's train_on_batch).
  /// With the config's class weights the step weighs each example by its
  /// class (Keras's class_weight).
  StepResult trainOnBatch(const NDArray &x, const NDArray &y);
  /// The same with per-example weights `sampleWeight` ([batch]; Keras's
  /// sample_weight), reduced as Keras does: the loss is
  /// sum(loss_i * w_i) / batch; the metrics stay unweighted, as Keras 3's
  /// compile() metrics are (it weighs only `weighted_metrics`).
  /// Class weights and sample weights together are an error, as in Keras.
  StepResult trainOnBatch(const NDArray &x, const NDArray &y,
                          const NDArray &sampleWeight);
  /// A step of a model with several inputs or outputs: one array per
  /// input and per output, in the model's order (inputs cast to their
  /// dtypes), each output's loss weighed by `sampleWeight` if given.
  StepResult trainOnBatch(const std::vector<NDArray> &inputs,
                          const std::vector<NDArray> &targets,
                          const NDArray &sampleWeight = NDArray());
  /// Keras's class_weight_to_sample_weights: the weight of each example's
  /// class in `y` (labels, or one-hot/probability rows by argmax), 1 for a
  /// class without one; f32 [batch].
  NDArray classWeightsOf(const NDArray &y) const;

  /// Set by a callback to end fit() after the current batch (Keras's
  /// model.stop_training); fit() clears it when it starts.
  bool stopTraining = false;
  /// The same for evaluate() (Keras's model.stop_evaluating; cleared when
  /// it starts) and predict() (model.stop_predicting).
  bool stopEvaluating = false;
  bool stopPredicting = false;

  void setLearningRate(double lr);
  double learningRate() const { return learningRate_; }
  /// The weights as training has them now (during fit, the step's).
  std::vector<NDArray> getWeights();
  void setWeights(const std::vector<NDArray> &values);
  int64_t iterations() const;
  /// Resumes from saved optimizer state (Executable::getOptimizerState()
  /// order), step count and learning rate: builds the full batch's step
  /// now and hands them to it; the next fit() continues from them (the
  /// weights are the model's, as always).
  void restoreOptimizerState(const std::vector<NDArray> &slots,
                             int64_t iterations, double learningRate);
  /// The config, resolved (CompileOptions::resolvedConfig).
  const TrainingConfig &config() const { return config_; }
  /// The input and target every step takes, at `batch` rows.
  TensorSpec inputSpec(int64_t batch);
  TensorSpec targetSpec(int64_t batch);

  /// The training Executables' stats (the full-batch one; in interpreted
  /// mode the dispatch and allocation totals of all, evaluate()'s included).
  ExecStats stats() const;
  /// The training Executable that ran last, or null before one did.
  Executable *executable() { return active_; }
  /// During fit: the data being trained on and the batch of the current
  /// step (valid in onBatchBegin/onBatchEnd).
  const DataSource *trainData() const { return trainData_; }
  const Batch &currentBatch() const { return current_; }

private:
  /// The training Executable for `batch` rows, with a %sample_weight
  /// argument when `weighted`, holding the state of the one that ran last.
  Executable &stepFor(int64_t batch, bool weighted = false);
  /// @forward for `batch` rows; with `outputMasks`, also returning the
  /// masked outputs' Keras masks (evaluate()).
  Executable &inferenceFor(int64_t batch, bool outputMasks = false);
  /// fit() on this rank's batches (all of them in one process).
  History fitShard(DataSource &train, const FitOptions &fit,
                   DataSource *validation);
  /// Data-parallel: the step's loss and metrics as the ranks' mean.
  void averageOverRanks(StepResult &r);

  Model &model_;
  CompileOptions compile_;
  /// compile_.resolvedConfig().
  TrainingConfig config_;
  llvm::raw_ostream *log_;
  double learningRate_;
  /// By (batch, weighted).
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Executable>> steps_;
  Executable *active_ = nullptr;
  /// By (batch, outputMasks).
  std::map<std::pair<int64_t, bool>, std::unique_ptr<Executable>> inference_;
  const DataSource *trainData_ = nullptr;
  Batch current_;
};

} // namespace kcc

#endif // KCC_FRONTEND_TRAINING_TRAINER_H
