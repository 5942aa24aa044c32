//===- Train.cpp - kcc train ----------------------------------------------===//
//
//   kcc train --model=mlp --data fashion-mnist --epochs 2 --batch 32
//   Epoch 1/2
//   1875/1875 [==============================] - 12s 6ms/step - loss: 0.4855 -
//   accuracy: 0.8270
//   ...
//   test accuracy: 0.8512 (10000 examples)
//
// One run is one kcc::Trainer::fit (the loop every embedding program runs
// too): the progress bar is its ProgbarLogger, --terminate-on-nan its
// TerminateOnNaN (named here: the failing step is replayed op by op to name
// the layer where the first non-finite value appears), --early-stopping,
// --reduce-lr-on-plateau and --csv-log its callbacks. The data are the
// bundled Fashion-MNIST, a .npz archive or a folder of memory-mapped .npy
// files, checked against the step before anything runs (UserData.h).
//
// --save and --save-weights write the trained model (frontend/keras/
// Saving.h), --checkpoint is ModelCheckpoint over the same writer, and
// --resume continues from a .keras checkpoint: its weights, optimizer
// state, step count, and its epoch as Keras's initial_epoch. Every output
// path is checked writable before anything is loaded or trained.
//
// Under mpirun (or srun) the run is data-parallel (frontend/training/
// Distributed.h): --batch is the global batch, rank 0 alone prints, logs,
// checkpoints and saves, and the other ranks print nothing but errors. A
// rank that fails exits without MPI_Finalize, so the launcher ends the job.
//
// --mode=both trains twice from the same initial weights on the same
// batches, compiled then interpreted, and compares the runs; one run finite
// where the other is not is an error.
//
//===----------------------------------------------------------------------===//

#include "CallbackFlags.h"
#include "Compile.h"
#include "Diagnostics.h"
#include "ModelLoader.h"
#include "Run.h"

#include "engine/NumericsCheck.h"
#include "frontend/Trace.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"
#include "frontend/training/Distributed.h"
#include "frontend/training/HostMetrics.h"
#include "frontend/training/Jit.h"
#include "frontend/training/Trainer.h"
#include "frontend/training/UserData.h"
#include "runtime/Collectives.h"
#include "runtime/Error.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/Dataset.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <unistd.h>

using namespace kcc;
using namespace kcc::driver;

namespace {

/// A loss as Keras prints it: "%.4f", and "nan" whatever the NaN's sign.
std::string lossText(double loss) {
  if (std::isnan(loss))
    return "nan";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.4f", loss);
  return text;
}

/// The loss as the run's first line names it: each output's with several
/// ("class: sparse_categorical_crossentropy, value: mse").
std::string lossText(const TrainingConfig &training) {
  // The built-in loss with the arguments that differ from Keras's defaults
  // ("huber(delta=2)"); from_logits is left out, as before.
  auto one = [](const LossConfig &loss) {
    if (!loss.custom.empty())
      return lossName(loss.kind).str();
    LossConfig shown = loss;
    shown.fromLogits = false;
    return shown.str();
  };
  if (training.outputs.empty())
    return one(training.loss);
  std::string text;
  for (const OutputTraining &out : training.outputs)
    text += (text.empty() ? "" : ", ") + out.name + ": " + one(out.loss);
  return text;
}

/// The examples of one `kcc train`: checked once, shared by both modes.
struct TrainData {
  Examples train, validation;
  /// Fashion-MNIST's test split, evaluated after training.
  std::optional<Examples> test;
};

/// What one training run measured.
struct RunResult {
  /// "test accuracy" (Fashion-MNIST's test split) or "val accuracy".
  std::optional<double> accuracy;
  std::string accuracyName;
  double msPerStep = 0;
  /// The mean loss of the last epoch run, as the progress bar shows it.
  double finalLoss = 0;
  /// --terminate-on-nan stopped the run.
  bool terminated = false;
};

/// The step that made the loss non-finite, re-run op by op from the inputs
/// it started from: prints where the first NaN or inf appears.
void reportNonFiniteStep(const LoadedModel &loaded, TrainingConfig training,
                         const StepInputs &before, const NDArray &x,
                         const NDArray &y) {
  mlir::MLIRContext ctx;
  registerFrontendDialects(ctx);
  training.batch = x.dim(0);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      buildTrainModule(ctx, *loaded.model, training);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  std::optional<NonFiniteOp> first =
      step ? checkTrainStep(step, before, x, y) : std::nullopt;
  if (first)
    llvm::WithColor::note(llvm::errs(), "kcc")
        << "first non-finite value: " << first->describe() << "\n";
  else
    llvm::WithColor::note(llvm::errs(), "kcc")
        << "the interpreter computes this step with finite values only: the "
           "non-finite loss comes from the compiled step\n";
}

/// TerminateOnNaN that names the step, the batch and the layer. What the
/// failing step started from is rebuilt only when a step fails: the state
/// at the epoch's start is kept (one copy per epoch, none per step) and the
/// epoch's earlier batches are replayed from it, which the deterministic
/// steps reproduce exactly.
class NaNDiagnosis : public TerminateOnNaN {
public:
  NaNDiagnosis(const LoadedModel &loaded, const TrainingConfig &training,
               int64_t steps)
      : loaded_(loaded), training_(training), steps_(steps) {}

  void onEpochBegin(int64_t epoch, Logs &) override {
    epoch_ = epoch;
    if (Executable *exe = trainer().executable())
      epochStart_ = captureStepInputs(*exe);
  }

protected:
  void terminate(int64_t batch, double loss) override {
    Trainer &t = trainer();
    Batch failing = t.currentBatch();
    Executable *exe = t.executable();
    if (epochStart_ && t.trainData()) {
      exe->setWeights(epochStart_->params);
      exe->setOptimizerState(epochStart_->state);
      exe->setIterations(epochStart_->iterations);
      exe->setLearningRate(epochStart_->learningRate);
      for (int64_t i = 0; i < batch; ++i) {
        Batch b = t.trainData()->batch(i);
        t.trainOnBatch(b.allInputs(), b.allTargets(), b.sampleWeight);
      }
      exe = t.executable();
    }
    StepInputs before = captureStepInputs(*exe);
    if (llvm::outs().is_displayed())
      llvm::outs() << "\n";
    llvm::outs().flush();
    llvm::WithColor::error(llvm::errs(), "kcc")
        << "step " << before.iterations + 1 << " (epoch " << epoch_ + 1
        << ", batch " << batch + 1 << "/" << steps_ << ", "
        << execModeName(exe->mode()) << "): loss is "
        << (std::isnan(loss) ? "nan" : "inf")
        << "; terminating training (--terminate-on-nan)\n";
    // The op-by-op replay feeds one input and one target.
    if (failing.inputs.empty() && failing.targets.empty())
      reportNonFiniteStep(loaded_, training_, before, failing.x, failing.y);
  }

private:
  const LoadedModel &loaded_;
  const TrainingConfig &training_;
  int64_t steps_;
  int64_t epoch_ = 0;
  std::optional<StepInputs> epochStart_;
};

/// Writes `exe`'s state (`epoch` epochs finished) to `path`: a .keras
/// archive, or with `weightsOnly` a .weights.h5 file. An imported model
/// keeps its original config (its ImportedModel gets the model back for
/// the write).
void saveModel(LoadedModel &loaded, const TrainingConfig &training,
               const Executable &exe, int64_t epoch, const std::string &path,
               bool weightsOnly) {
  keras::ModelState state = captureState(exe, epoch);
  if (!loaded.imported) {
    if (weightsOnly)
      keras::saveWeightsH5(path, *loaded.model, state);
    else
      keras::saveKerasArchive(path, *loaded.model, state, training);
    return;
  }
  keras::ImportedModel &imported = *loaded.imported;
  imported.model = std::move(loaded.model);
  struct Restore {
    LoadedModel &l;
    ~Restore() { l.model = std::move(l.imported->model); }
  } restore{loaded};
  if (weightsOnly)
    keras::saveWeightsH5(path, imported, state);
  else
    keras::saveKerasArchive(path, imported, state, training);
}

/// "1.3 MB", "41.2 kB", "812 B".
std::string sizeText(const std::string &path) {
  uint64_t bytes = 0;
  if (llvm::sys::fs::file_size(path, bytes))
    return "?";
  std::string text;
  llvm::raw_string_ostream os(text);
  if (bytes >= 1000000)
    os << llvm::format("%.1f MB", bytes / 1e6);
  else if (bytes >= 1000)
    os << llvm::format("%.1f kB", bytes / 1e3);
  else
    os << bytes << " B";
  return text;
}

/// ModelCheckpoint whose save function knows the epochs finished.
class FlagCheckpoint : public ModelCheckpoint {
public:
  using SaveAt =
      std::function<void(const std::string &, bool weightsOnly, int64_t)>;
  FlagCheckpoint(Options o, SaveAt save)
      : ModelCheckpoint(std::move(o),
                        [this](const std::string &path, bool weightsOnly) {
                          saveAt_(path, weightsOnly, finished_);
                        }),
        saveAt_(std::move(save)) {}
  void onEpochEnd(int64_t epoch, Logs &logs) override {
    finished_ = epoch + 1;
    ModelCheckpoint::onEpochEnd(epoch, logs);
  }

private:
  SaveAt saveAt_;
  int64_t finished_ = 0;
};

/// Reads and checks the data of `config` against `spec`.
TrainData loadData(const TrainConfig &config, const DataSpec &spec) {
  TrainData data;
  if (config.data == "fashion-mnist") {
    std::string dir =
        config.dataDir.empty() ? defaultFashionMnistDir() : config.dataDir;
    FashionMnist fm = loadFashionMnist(dir);
    data.train = {
        {ExampleArray::fromNDArray(fm.train.x, dir + ": train images")},
        {ExampleArray::fromNDArray(fm.train.y, dir + ": train labels")},
        {}};
    checkExamples(data.train, spec, dir, &llvm::errs());
    data.test =
        Examples{{ExampleArray::fromNDArray(fm.test.x, dir + ": t10k images")},
                 {ExampleArray::fromNDArray(fm.test.y, dir + ": t10k labels")},
                 {}};
    checkExamples(*data.test, spec, dir, &llvm::errs());
  } else {
    data.train = loadExamples(config.data, spec, &llvm::errs());
  }
  if (!config.validationData.empty()) {
    // Its sample_weight weighs val_loss, as Keras's validation_data=(x, y,
    // sample_weight) does.
    data.validation = loadExamples(config.validationData, spec, &llvm::errs());
  } else if (config.validationSplit > 0) {
    // Keras: split_at = floor(n * (1 - split)); the tail validates.
    int64_t n = data.train.size();
    int64_t splitAt =
        static_cast<int64_t>(std::floor(n * (1.0 - config.validationSplit)));
    if (splitAt == 0 || splitAt == n)
      throw Error("--validation-split " +
                  pythonFloatRepr(config.validationSplit) + " of " +
                  std::to_string(n) +
                  " examples leaves one of the two splits empty");
    // Both parts keep their weights, as Keras splits sample_weight too.
    data.validation = data.train.slice(splitAt, n);
    data.train = data.train.slice(0, splitAt);
  }
  return data;
}

/// Rank 0 of a data-parallel run, or the one process: the one that writes.
bool isRootRank() { return collectives::rank() == 0; }

/// --fault-exit: the rank ends as a crashed process would, without
/// MPI_Finalize, after the given step of the run.
class FaultExit : public Callback {
public:
  FaultExit(int rank, int64_t step) : rank_(rank), step_(step) {}
  void onBatchEnd(int64_t, Logs &) override {
    if (++done_ == step_ && collectives::rank() == rank_) {
      llvm::errs() << "kcc: rank " << rank_ << ": exiting after step " << done_
                   << " (--fault-exit)\n";
      llvm::errs().flush();
      std::_Exit(3);
    }
  }

private:
  int rank_;
  int64_t step_, done_ = 0;
};

/// The callbacks the flags ask for, after TerminateOnNaN, in Keras's
/// usual order: ReduceLROnPlateau (it adds learning_rate to the logs) and
/// EarlyStopping, then CSVLogger, which logs what the others added.
llvm::Expected<std::vector<CallbackPtr>> flagCallbacks(const TrainConfig &c) {
  std::vector<CallbackPtr> callbacks;
  if (c.reduceLrOnPlateau) {
    auto o = parseReduceLROnPlateau(*c.reduceLrOnPlateau);
    if (!o)
      return o.takeError();
    callbacks.push_back(std::make_shared<ReduceLROnPlateau>(*o));
  }
  if (c.earlyStopping) {
    auto o = parseEarlyStopping(*c.earlyStopping);
    if (!o)
      return o.takeError();
    callbacks.push_back(std::make_shared<EarlyStopping>(*o));
  }
  if (!c.csvLog.empty() && isRootRank())
    callbacks.push_back(
        std::make_shared<CSVLogger>(c.csvLog, ',', c.csvAppend));
  return callbacks;
}

/// Trains a freshly loaded model (so every mode starts from the same
/// initial weights) in `mode`; loads and checks the data on first use.
llvm::Expected<RunResult> trainOnce(const TrainConfig &config, ExecMode mode,
                                    std::optional<TrainData> &data) {
  // Progress and messages share stdout, so piped output stays in order;
  // --verbose 0 prints nothing but errors and warnings (stderr).
  llvm::raw_ostream &out = config.verbose ? llvm::outs() : llvm::nulls();
  // A checkpoint is the model when resuming; its optimizer state goes to
  // the step once the Trainer has one.
  std::optional<keras::OptimizerState> resumeState, continueState;
  int64_t initialEpoch = 0;
  llvm::Expected<LoadedModel> loaded = LoadedModel();
  if (!config.resume.empty()) {
    keras::Checkpoint ckpt = keras::loadCheckpoint(config.resume);
    if (!ckpt.optimizer)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          config.resume + ": no optimizer state to resume from (saved "
                          "before any training step)");
    if (ckpt.epoch >= config.epochs)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          config.resume + ": trained for " + std::to_string(ckpt.epoch) +
              " epoch(s) already; --epochs is the total (Keras's "
              "epochs with initial_epoch): give more than " +
              std::to_string(ckpt.epoch));
    resumeState = ckpt.optimizer;
    initialEpoch = ckpt.epoch;
    // Named as the model it holds (Keras's model.name), not the file.
    std::string name = ckpt.imported.model->name();
    *loaded = loadedFromImport(std::move(ckpt.imported), name);
  } else if (config.source.builtin.empty() &&
             llvm::sys::path::extension(config.source.input) == ".keras" &&
             llvm::sys::fs::exists(config.source.input)) {
    // Keras's load_model + fit: a model saved with its optimizer goes on
    // with the optimizer's state and step count, from epoch 0.
    keras::Checkpoint ckpt =
        keras::loadCheckpoint(config.source.input, config.source.seed);
    continueState = std::move(ckpt.optimizer);
    std::string name = llvm::sys::path::stem(config.source.input).str();
    *loaded = loadedFromImport(std::move(ckpt.imported), name);
  } else {
    loaded = loadModel(config.source);
  }
  if (!loaded)
    return loaded.takeError();
  auto training = resolveTrainingConfig(*loaded, config.source,
                                        /*defaultMetrics=*/{});
  if (!training)
    return training.takeError();
  // A flag that switches the optimizer starts a new one, as compile() with
  // another optimizer does in Keras; one that changes its learning rate
  // keeps the state and sets the rate.
  if (continueState &&
      training->optimizer.kind == loaded->training.optimizer.kind) {
    resumeState = std::move(continueState);
    if (training->optimizer.resolvedLearningRate() !=
            loaded->training.optimizer.resolvedLearningRate() ||
        training->optimizer.schedule)
      resumeState->learningRate = training->optimizer.resolvedLearningRate();
  }
  training->mode = mode;
  training->dataParallel = collectives::size() > 1;
  auto callbacks = flagCallbacks(config);
  if (!callbacks)
    return callbacks.takeError();

  // The data are checked before any step is built: a bad file fails fast.
  int64_t batch = config.source.batch;
  DataSpec spec = dataSpecOf(*loaded->model, *training);
  if (llvm::Error err = checkClassWeight(*loaded->model, *training))
    return llvm::createStringError("--class-weight: " +
                                   llvm::toString(std::move(err)));
  if (!data)
    data = loadData(config, spec);
  // --dump-dir and --fusion-report: the step trained, inspected once.
  if ((!config.dumpDir.empty() || config.fusionReport) &&
      mode == config.modes.front() && isRootRank())
    if (inspectTrainStep(*loaded, *training, config.dumpDir,
                         config.fusionReport))
      return llvm::createStringError("cannot inspect the training step");
  Trainer trainer(*loaded->model, *training,
                  isRootRank() && config.verbose ? &out : nullptr);
  if (resumeState) {
    try {
      trainer.restoreOptimizerState(resumeState->slots, resumeState->iterations,
                                    resumeState->learningRate);
    } catch (const Error &e) {
      if (!config.resume.empty())
        throw Error(config.resume +
                    ": the checkpoint does not fit the model: " + e.what());
      // Flags changed the optimizer's state layout (SGD's momentum).
      llvm::WithColor::warning(llvm::errs(), "kcc")
          << config.source.input << ": the saved optimizer state does not "
          << "fit the optimizer the flags give; starting it afresh ("
          << e.what() << ")\n";
      resumeState.reset();
    }
  }
  if (config.checkpoint && isRootRank()) {
    auto o = parseModelCheckpoint(*config.checkpoint);
    if (!o)
      return o.takeError();
    callbacks->push_back(std::make_shared<FlagCheckpoint>(
        *o, [&](const std::string &path, bool weightsOnly, int64_t epoch) {
          saveModel(*loaded, *training, *trainer.executable(), epoch, path,
                    weightsOnly);
        }));
  }
  std::unique_ptr<ArrayDataSource> train =
      dataSourceOf(data->train, spec, batch);
  train->setShuffle(config.shuffle, config.source.seed);
  std::unique_ptr<ArrayDataSource> validation;
  if (data->validation.size())
    validation = dataSourceOf(data->validation, spec, batch);

  out << "kcc: training " << loaded->name << " (" << execModeName(mode)
      << ", batch " << batch << ", " << optimizerName(training->optimizer.kind)
      << ", " << lossText(*training) << ") on " << data->train.size()
      << " examples" << (data->train.x[0].mapped() ? " (memory-mapped)" : "");
  if (validation)
    out << ", validating on " << data->validation.size();
  if (training->dataParallel)
    out << ", data-parallel over " << collectives::size() << " ranks";
  out << "\n";

  if (resumeState && !config.resume.empty())
    out << "kcc: resuming from " << config.resume << " at epoch "
        << initialEpoch + 1 << " (" << resumeState->iterations
        << " steps done)\n";
  else if (resumeState)
    out << "kcc: continuing the " << optimizerName(training->optimizer.kind)
        << " state saved in " << config.source.input << " ("
        << resumeState->iterations << " steps done)\n";

  FitOptions fit;
  fit.epochs = config.epochs;
  fit.initialEpoch = initialEpoch;
  fit.batchSize = batch;
  fit.verbose = config.verbose;
  fit.stepsPerEpoch = config.stepsPerEpoch;
  fit.validationFreq = config.validationFreq;
  fit.workers = config.workers;
  int64_t steps = train->numBatches();
  if (config.stepsPerEpoch > 0)
    steps = std::min(steps, config.stepsPerEpoch);
  std::shared_ptr<NaNDiagnosis> nan;
  if (config.terminateOnNan) {
    nan = std::make_shared<NaNDiagnosis>(*loaded, *training, steps);
    fit.callbacks.push_back(nan);
  }
  fit.callbacks.insert(fit.callbacks.end(), callbacks->begin(),
                       callbacks->end());
  if (config.faultExit)
    fit.callbacks.push_back(std::make_shared<FaultExit>(
        config.faultExit->first, config.faultExit->second));
  History history = trainer.fit(*train, fit, validation.get());

  RunResult result;
  result.terminated = nan && nan->stoppedAtBatch.has_value();
  result.finalLoss = history.epochs.back().values["loss"];
  double stepSeconds = 0;
  int64_t stepsRun = 0;
  for (const EpochLogs &e : history.epochs) {
    stepSeconds += e.stepSeconds;
    stepsRun += e.steps;
  }
  result.msPerStep = 1e3 * stepSeconds / std::max<int64_t>(1, stepsRun);
  if (training->dataParallel && config.verbose)
    out << llvm::format(
        "kcc: %.3f ms/step, %.1f%% of it in the gradients' all-reduce\n",
        result.msPerStep,
        100 * collectives::allReduceSeconds() / std::max(stepSeconds, 1e-9));
  if (result.terminated) {
    if (!config.save.empty() || !config.saveWeights.empty())
      llvm::WithColor::warning(llvm::errs(), "kcc")
          << "training was terminated: the model is not saved\n";
    return result;
  }
  int64_t finished = initialEpoch + static_cast<int64_t>(history.epochs.size());
  const Executable &exe = *trainer.executable();
  if (!config.save.empty() && isRootRank()) {
    saveModel(*loaded, *training, exe, finished, config.save, false);
    out << "kcc: saved the model to " << config.save << " ("
        << sizeText(config.save) << ", epoch " << finished << ", "
        << exe.iterations() << " steps)\n";
  }
  if (!config.saveWeights.empty() && isRootRank()) {
    saveModel(*loaded, *training, exe, finished, config.saveWeights, true);
    out << "kcc: saved the weights to " << config.saveWeights << " ("
        << sizeText(config.saveWeights) << ", epoch " << finished << ", "
        << exe.iterations() << " steps)\n";
  }
  // Class scores against integer labels: the accuracy a Keras user checks,
  // whether or not the model logs it as a metric.
  if (!spec.several() && spec.targets[0].sparseLabels) {
    const Examples *eval = data->test   ? &*data->test
                           : validation ? &data->validation
                                        : nullptr;
    if (eval) {
      std::vector<int64_t> all(eval->size());
      for (int64_t i = 0; i < eval->size(); ++i)
        all[i] = i;
      NDArray x;
      eval->x[0].gather(all.data(), eval->size(), spec.inputs[0].type, x);
      NDArray labels = NDArray::empty({eval->size()}, DType::I32);
      for (int64_t i = 0; i < eval->size(); ++i)
        labels.data<int32_t>()[i] = static_cast<int32_t>(eval->y[0].at(i, 0));
      // The step's own sparse_categorical_accuracy (HostMetrics).
      result.accuracy = evaluateMetric("sparse_categorical_accuracy",
                                       LossKind::SparseCategoricalCrossentropy,
                                       trainer.predict(x, batch), labels);
      result.accuracyName = data->test ? "test accuracy" : "val accuracy";
      out << result.accuracyName << ": "
          << llvm::format("%.4f", *result.accuracy) << " (" << eval->size()
          << " examples)\n";
    }
  }
  return result;
}

/// The --mode=both summary; false when one run's loss is finite and the
/// other's is not (the compiled step must never hide a NaN, nor make one).
bool compareRuns(const TrainConfig &config,
                 const std::vector<RunResult> &results) {
  llvm::raw_ostream &out = config.verbose ? llvm::outs() : llvm::nulls();
  // The step time excludes compilation (done before the first step) and
  // data loading; both runs saw the same batches in the same order.
  out << "\nsame initial weights, same batches:\n";
  for (size_t i = 0; i < 2; ++i) {
    std::string name = std::string(execModeName(config.modes[i])) + ":";
    out << llvm::format("  %-12s loss %-10s ", name.c_str(),
                        lossText(results[i].finalLoss).c_str());
    if (results[i].terminated) {
      out << "(terminated on a non-finite loss)\n";
      continue;
    }
    if (results[i].accuracy)
      out << llvm::format("%s %.4f  ", results[i].accuracyName.c_str(),
                          *results[i].accuracy);
    out << llvm::format("%8.3f ms/step\n", results[i].msPerStep);
  }
  double l0 = results[0].finalLoss, l1 = results[1].finalLoss;
  bool finite0 = std::isfinite(l0), finite1 = std::isfinite(l1);
  if (finite0 != finite1) {
    llvm::WithColor::error(llvm::errs(), "kcc")
        << "the final losses disagree on finiteness: "
        << execModeName(config.modes[0]) << " " << lossText(l0) << ", "
        << execModeName(config.modes[1]) << " " << lossText(l1) << "\n";
    return false;
  }
  if (results[0].terminated || results[1].terminated)
    return true;
  out << llvm::format("  interpreted / compiled time per step: %.2fx; ",
                      results[1].msPerStep / results[0].msPerStep);
  if (results[0].accuracy && results[1].accuracy)
    out << llvm::format(
        "accuracy differs by %.2f points; ",
        100 * std::abs(*results[0].accuracy - *results[1].accuracy));
  if (finite0)
    out << llvm::format("loss by %.2g (relative)\n",
                        std::abs(l0 - l1) / std::max(1e-12, std::abs(l1)));
  else
    out << "both losses are non-finite\n";
  return true;
}

} // namespace

int driver::runTrain(const TrainConfig &config) {
  if (isMlirInput(config.source) && !config.source.input.empty())
    return fail("kcc train needs a model with weights: a Keras spec (.json, "
                ".keras, .h5) or --model=mlp|cnn|residual, not " +
                config.source.input);
  if (config.modes.size() > 1 && !config.csvLog.empty())
    return fail("--csv-log logs one run: give --mode=compiled or "
                "--mode=interpreted with it");

  if (config.modes.size() > 1 &&
      (!config.save.empty() || !config.saveWeights.empty() ||
       config.checkpoint))
    return fail("--save, --save-weights and --checkpoint save one run: give "
                "--mode=compiled or --mode=interpreted with them");
  if (!config.resume.empty() &&
      (!config.source.input.empty() || !config.source.builtin.empty()))
    return fail("--resume " + config.resume +
                " is the model: give no model file or --model with it");
  if (!config.save.empty() && !llvm::StringRef(config.save).ends_with(".keras"))
    return fail("--save " + config.save +
                ": the file name must end in .keras (as Keras requires)");
  if (!config.saveWeights.empty() &&
      !llvm::StringRef(config.saveWeights).ends_with(".weights.h5"))
    return fail("--save-weights " + config.saveWeights +
                ": the file name must end in .weights.h5 (as Keras "
                "requires)");

  try {
    Distributed dist = config.distributed ? Distributed::fromEnvironment()
                                          : Distributed::singleProcess();
    // The other ranks' stdout would repeat rank 0's; their errors still
    // go to stderr.
    if (!dist.isRoot() && std::freopen("/dev/null", "w", stdout))
      ::dup2(::fileno(stdout), STDOUT_FILENO);
    // Outputs are checked before hours of training, not after.
    if (!config.save.empty())
      checkWritable(config.save);
    if (!config.saveWeights.empty())
      checkWritable(config.saveWeights);
    if (config.checkpoint) {
      auto o = parseModelCheckpoint(*config.checkpoint);
      if (!o)
        return fail(llvm::toString(o.takeError()));
      // The folder of the pattern, when it holds no field.
      if (!llvm::StringRef(llvm::sys::path::parent_path(o->filepath))
               .contains('{'))
        checkWritable(o->filepath);
    }
    std::optional<TrainData> data;
    std::vector<RunResult> results;
    bool terminated = false;
    for (ExecMode mode : config.modes) {
      auto result = trainOnce(config, mode, data);
      if (!result)
        return fail(llvm::toString(result.takeError()));
      results.push_back(*result);
      terminated |= result->terminated;
    }
    int status = terminated ? 1 : 0;
    if (results.size() == 2 && !compareRuns(config, results))
      status = 1;
    // Every rank got here: a rank that failed returned through fail()
    // without finalizing, and the launcher ended the job.
    dist.finalize();
    return status;
  } catch (const Error &e) {
    return fail(e.what());
  }
}
