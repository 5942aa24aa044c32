//===- Options.cpp - kcc's command line -----------------------------------===//
//
// Every llvm::cl option of the driver. Options shared by the subcommands
// (the model source and the train-step settings) are registered in each of
// them; MLIR's own options (--mlir-print-ir-after-all, --mlir-timing, ...)
// belong to the top-level compile command, where pipelines run.
//
//===----------------------------------------------------------------------===//

#include "Options.h"

#include "codegen/Passes.h"
#include "engine/CompileTiming.h"
#include "frontend/keras/LayerRegistry.h"
#include "passes/Passes.h"
#include "runtime/kernels/Kernels.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/Config/llvm-config.h"
#include "llvm/Pass.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <sstream>

using namespace kcc::driver;
namespace cl = llvm::cl;

namespace {

cl::SubCommand
    trainCommand("train",
                 "Train a model on a dataset with a Keras-style progress bar");
cl::SubCommand benchCommand("bench",
                            "Time compiled against interpreted training steps");
cl::SubCommand predictCommand("predict",
                              "Run a model on the arrays of a .npz file and "
                              "write its outputs (.npy / .npz)");
cl::SubCommand evaluateCommand("evaluate",
                               "A model's loss and metrics on the x and y of "
                               "a .npz file, as Keras's evaluate()");

cl::OptionCategory modelCategory("Model options");
cl::OptionCategory trainStepCategory("Training step options");
cl::OptionCategory compileCategory("Compile options");
cl::OptionCategory runCategory("Train and bench options");

#define KCC_ALL_COMMANDS                                                       \
  cl::sub(cl::SubCommand::getTopLevel()), cl::sub(trainCommand),               \
      cl::sub(benchCommand), cl::sub(predictCommand), cl::sub(evaluateCommand)

// ---- The model -------------------------------------------------------------
cl::opt<std::string> inputFile(
    cl::Positional,
    cl::desc("<model: .mlir holding @forward, or a Keras .json/.keras/.h5>"),
    cl::init(""), cl::cat(modelCategory), KCC_ALL_COMMANDS);
cl::opt<std::string> builtinModel(
    "model", cl::desc("Use a reference model built in C++: mlp|cnn|residual"),
    cl::value_desc("name"), cl::cat(modelCategory), KCC_ALL_COMMANDS);
cl::opt<std::string> listLayers(
    "list-layers",
    cl::desc("Print every Keras layer class kcc imports, with what it reads "
             "of its config, and exit (=markdown: docs/frontend.md's table)"),
    cl::value_desc("text|markdown"), cl::ValueOptional, cl::cat(modelCategory));
cl::opt<int64_t> batch(
    "batch",
    cl::desc("Static batch size of the traced model (a .mlir input has its "
             "own)"),
    cl::init(32), cl::cat(modelCategory), KCC_ALL_COMMANDS);
cl::alias batchSizeAlias("batch-size", cl::desc("Alias for --batch"),
                         cl::aliasopt(batch));
cl::opt<std::string> dtypePolicy(
    "dtype-policy",
    cl::desc("Keras dtype policy for every layer: float32 or mixed_bfloat16 "
             "(float32 variables, bfloat16 compute; default: the model's)"),
    cl::value_desc("policy"), cl::cat(modelCategory), KCC_ALL_COMMANDS);

cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of the initial weights (and, in kcc "
                                "train, of each epoch's shuffle)"),
                       cl::init(0), cl::cat(modelCategory), KCC_ALL_COMMANDS);

// ---- The training step ----------------------------------------------------
/// --loss's help: every built-in loss, from the one list of them.
const std::string &lossHelp() {
  static const std::string text = [] {
    std::string names;
    for (kcc::LossKind k : kcc::allLosses())
      names += (names.empty() ? "" : ", ") + kcc::lossName(k).str();
    return "Loss, with Keras's arguments as NAME(KEY=VALUE,...), e.g. "
           "huber(delta=2) or "
           "binary_focal_crossentropy(gamma=3,label_smoothing=0.1): " +
           names +
           " (default sparse_categorical_crossentropy; Keras's class names "
           "and aliases mse, mae, mape, msle, kld, bce work too; every loss "
           "takes reduction=sum_over_batch_size|sum|mean|"
           "mean_with_sample_weight)";
  }();
  return text;
}
cl::opt<std::string> loss("loss", cl::desc(lossHelp()),
                          cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<std::string> optimizer("optimizer",
                               cl::desc("Optimizer: adam (default), sgd, "
                                        "rmsprop, adamw, adagrad, nadam, "
                                        "adamax, lion"),
                               cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double>
    learningRate("lr",
                 cl::desc("Learning rate (default: Keras's for the optimizer)"),
                 cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<std::string> lrSchedule(
    "lr-schedule",
    cl::desc("Learning-rate schedule computed in the step, as Keras's class "
             "and arguments, e.g. ExponentialDecay(initial_learning_rate=0.1,"
             "decay_steps=1000,decay_rate=0.5) (overrides --lr)"),
    cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<std::string> classWeight(
    "class-weight",
    cl::desc("Keras's class_weight: a JSON object {\"0\": 1, \"1\": 5} or "
             "0:1,1:5 (classes absent weigh 1)"),
    cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<bool> dataParallel(
    "data-parallel",
    cl::desc("Build the step data-parallel: the gradients averaged over the "
             "ranks (kc.all_reduce_start/wait in buckets) before the "
             "optimizer (kcc train does it under mpirun)"),
    cl::cat(trainStepCategory), cl::sub(cl::SubCommand::getTopLevel()));
cl::opt<int64_t>
    bucketKb("all-reduce-bucket-kb",
             cl::desc("Data-parallel: the most KiB of gradients one all-reduce "
                      "carries; each bucket starts as soon as the backward has "
                      "produced it (default 1024)"),
             cl::init(1024), cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::alias learningRateAlias("learning-rate", cl::desc("Alias for --lr"),
                            cl::aliasopt(learningRate));
// Each Keras optimizer argument, under its Keras name (beta_1 is
// --beta-1); unset keeps the spec's value or Keras's default.
cl::opt<double> momentum("momentum",
                         cl::desc("SGD's and RMSprop's momentum (default 0)"),
                         cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<bool> nesterov("nesterov",
                       cl::desc("SGD: Nesterov momentum (default false)"),
                       cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> beta1("beta-1",
                      cl::desc("Adam, AdamW, Nadam, Adamax, Lion: beta_1 "
                               "(default 0.9)"),
                      cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> beta2("beta-2",
                      cl::desc("Adam, AdamW, Nadam, Adamax, Lion: beta_2 "
                               "(default 0.999, lion 0.99)"),
                      cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> epsilon("epsilon",
                        cl::desc("Adam, AdamW, RMSprop, Adagrad, Nadam, "
                                 "Adamax: epsilon (default 1e-7)"),
                        cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<bool> amsgrad("amsgrad",
                      cl::desc("Adam, AdamW: AMSGrad (default false)"),
                      cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> rho("rho", cl::desc("RMSprop: rho (default 0.9)"),
                    cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<bool> centered("centered",
                       cl::desc("RMSprop: centered (default false)"),
                       cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> initialAccumulatorValue(
    "initial-accumulator-value",
    cl::desc("Adagrad: initial_accumulator_value (default 0.1)"),
    cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay (default: Keras's for the "
                                     "optimizer, adamw 0.004)"),
                            cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> clipnorm("clipnorm",
                         cl::desc("Clip each gradient to this L2 norm"),
                         cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double> clipvalue("clipvalue",
                          cl::desc("Clip each gradient element to [-v, v]"),
                          cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<double>
    globalClipnorm("global-clipnorm",
                   cl::desc("Clip all gradients to this global L2 norm"),
                   cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
cl::opt<bool> fromLogits("from-logits",
                         cl::desc("The model's output is logits"),
                         cl::cat(trainStepCategory), KCC_ALL_COMMANDS);
/// --metrics's help: every built-in metric, from the list the
/// unknown-metric error gives.
const std::string &metricsHelp() {
  static const std::string text =
      "Metrics computed in the step, e.g. accuracy, AUC(curve=PR,name=pr) "
      "or Precision(thresholds=[0.3,0.7]) (logged as a list, as Keras "
      "does): " +
      kcc::MetricConfig::knownNames(/*withAccuracy=*/true) +
      "each with Keras's arguments, Class(key=value,...)";
  return text;
}
cl::list<std::string> metrics("metrics", cl::desc(metricsHelp()),
                              cl::CommaSeparated, cl::cat(trainStepCategory),
                              KCC_ALL_COMMANDS);

// ---- Compile ---------------------------------------------------------------
cl::opt<EmitAction> emitAction(
    "emit", cl::desc("How far to lower (each stage includes the ones above)"),
    cl::init(EmitAction::Kc),
    cl::values(
        clEnumValN(EmitAction::Kc, "kc",
                   "the imported, canonicalized @forward"),
        clEnumValN(EmitAction::Train, "train",
                   "after kc-build-train-step: @train_step"),
        clEnumValN(EmitAction::Linalg, "linalg",
                   "after kc-lower-to-linalg: linalg on tensors, library "
                   "calls for GEMM and convolution"),
        clEnumValN(EmitAction::Fused, "fused",
                   "after kc-fuse-elementwise: each linalg.generic left is "
                   "one loop nest (kernel)"),
        clEnumValN(EmitAction::LlvmMlir, "llvm-mlir", "the LLVM dialect"),
        clEnumValN(EmitAction::Llvm, "llvm", "LLVM IR text, optimized"),
        clEnumValN(EmitAction::Obj, "obj",
                   "an object file, and its C header (foo.o -> foo.h)"),
        clEnumValN(EmitAction::Lib, "lib",
                   "a shared library linked with the kcc runtime, and its C "
                   "header")),
    cl::cat(compileCategory));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(compileCategory));
cl::opt<std::string> dumpDir(
    "dump-dir",
    cl::desc("Write every stage reached to DIR: 01-kc.mlir, "
             "02-train.mlir, 03-linalg.mlir, 04-fused.mlir, 05-llvm.mlir, "
             "06-llvm.ll (kcc train: the step it trains)"),
    cl::value_desc("dir"), cl::cat(compileCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(trainCommand));
cl::opt<std::string>
    symbolPrefix("prefix",
                 cl::desc("Prefix of the emitted function names from "
                          "--emit=linalg on (mlp_ -> mlp_train_step)"),
                 cl::value_desc("name"), cl::cat(compileCategory));
cl::opt<std::string> mcpu("mcpu", cl::desc("Target CPU (default: the host's)"),
                          cl::value_desc("cpu"), cl::cat(compileCategory));
cl::opt<std::string> mattr("mattr",
                           cl::desc("Target features, e.g. +avx2,-avx512f"),
                           cl::value_desc("a1,+a2,-a3"),
                           cl::cat(compileCategory));
cl::opt<bool> planMemory(
    "plan-memory",
    cl::desc("Place intermediates in one static arena (kc-plan-memory; "
             "--plan-memory=false allocates each)"),
    cl::init(true), cl::cat(compileCategory));
cl::opt<bool> dedupeKernels(
    "dedupe-kernels",
    cl::desc("Outline each kernel alone, its buffers as arguments, and "
             "compile identical ones once (kc-dedupe-kernels)"),
    cl::init(false), cl::cat(compileCategory));
cl::opt<int64_t> coldWork(
    "cold-work",
    cl::desc("Operations a call below which an outlined kernel gets "
             "unoptimized machine code (kc-mark-cold-functions; 0: none; "
             "default: the pipeline's)"),
    cl::value_desc("n"), cl::cat(compileCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(benchCommand));
cl::opt<bool> fusionReport(
    "fusion-report",
    cl::desc("Print each fusion (elementwise chains, library-call epilogues, "
             "loop fusion groups) with the layers it covers and the bytes it "
             "saves, each refused fusion with its reason, the memory plan "
             "and the kernel count of the training step, then stop (kcc "
             "train: of the step it trains, then train)"),
    cl::init(false), cl::cat(compileCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(trainCommand));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::Prefix, cl::init(3), cl::cat(compileCategory));
cl::opt<std::string> llvmPasses(
    "llvm-passes",
    cl::desc("LLVM IR pipeline to run instead of kcc's, in opt's -passes "
             "syntax (default<O3>: LLVM's -O3, without loop unrolling)"),
    cl::value_desc("pipeline"), cl::cat(compileCategory),
    cl::sub(cl::SubCommand::getTopLevel()), cl::sub(benchCommand));

// ---- Train and bench ------------------------------------------------------
cl::opt<std::string> dataset(
    "data",
    cl::desc("Training data: fashion-mnist (the bundled default), a .npz "
             "archive (x, y), or a folder of x.npy/y.npy (memory-mapped)"),
    cl::value_desc("fashion-mnist|file.npz|dir"), cl::init("fashion-mnist"),
    cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<std::string> validationData(
    "validation-data",
    cl::desc("Validation data (.npz or a folder of .npy): val_loss and "
             "val_<metric> at each epoch's end"),
    cl::value_desc("file.npz|dir"), cl::cat(runCategory),
    cl::sub(trainCommand));
cl::opt<int64_t> validationFreq(
    "validation-freq",
    cl::desc("Validate after every N-th epoch (Keras's validation_freq)"),
    cl::init(1), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<double> validationSplit(
    "validation-split",
    cl::desc("Validate on the last fraction F of the training data, taken "
             "before shuffling (Keras's validation_split)"),
    cl::value_desc("F"), cl::init(0.0), cl::cat(runCategory),
    cl::sub(trainCommand));
cl::opt<bool> shuffle("shuffle",
                      cl::desc("Shuffle the training examples each epoch, "
                               "from (--seed, epoch) (default true)"),
                      cl::init(true), cl::cat(runCategory),
                      cl::sub(trainCommand));
cl::opt<int> verbose("verbose",
                     cl::desc("0 silent, 1 progress bar (default), 2 one "
                              "line per epoch"),
                     cl::init(1), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<int> workers("workers",
                     cl::desc("Threads reading batches ahead of the step "
                              "(default 1; 0 reads them in the loop)"),
                     cl::init(1), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<std::string>
    csvLog("csv-log",
           cl::desc("CSVLogger: one row per epoch (epoch, then the logs' keys "
                    "sorted; a list metric as \"[v1, v2]\", as Keras) to FILE"),
           cl::value_desc("file"), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<bool> csvAppend("csv-append",
                        cl::desc("Append to the --csv-log file (Keras's "
                                 "append=True)"),
                        cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<std::string> earlyStopping(
    "early-stopping",
    cl::desc("EarlyStopping with Keras's arguments: monitor, patience, "
             "min_delta, mode, baseline, restore_best_weights, "
             "start_from_epoch, verbose"),
    cl::value_desc("key=value,..."), cl::ValueOptional, cl::cat(runCategory),
    cl::sub(trainCommand));
cl::opt<std::string> reduceLrOnPlateau(
    "reduce-lr-on-plateau",
    cl::desc("ReduceLROnPlateau with Keras's arguments: monitor, factor, "
             "patience, min_delta, cooldown, min_lr, mode, verbose"),
    cl::value_desc("key=value,..."), cl::ValueOptional, cl::cat(runCategory),
    cl::sub(trainCommand));
cl::opt<std::string> checkpointFlag(
    "checkpoint",
    cl::desc("ModelCheckpoint with Keras's arguments: filepath (required; "
             "{epoch:02d}, {val_loss:.4f}, ...), monitor, save_best_only, "
             "save_weights_only, mode, initial_value_threshold, verbose"),
    cl::value_desc("filepath=PATTERN,key=value,..."), cl::ValueOptional,
    cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<std::string> saveFlag(
    "save",
    cl::desc("After training, save the model, its optimizer state and the "
             "epoch to a Keras 3 .keras archive"),
    cl::value_desc("OUT.keras"), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<std::string> saveWeightsFlag(
    "save-weights",
    cl::desc("After training, save the weights (and optimizer variables) as "
             "Keras 3's model.save_weights() does"),
    cl::value_desc("OUT.weights.h5"), cl::cat(runCategory),
    cl::sub(trainCommand));
cl::opt<std::string> resumeFlag(
    "resume",
    cl::desc("Resume training from a .keras checkpoint kcc saved (the "
             "model, weights, optimizer state, step count; starts at its "
             "epoch: --epochs is the total, as Keras's epochs)"),
    cl::value_desc("CKPT.keras"), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<bool> distributedFlag(
    "distributed",
    cl::desc("Under mpirun (or srun), train one model data-parallel over "
             "the ranks, --batch being the global batch (default); false: "
             "every process trains alone"),
    cl::init(true), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<std::string> faultExitFlag(
    "fault-exit",
    cl::desc("Testing: RANK:STEP makes that rank exit after that step, as a "
             "crashed process would"),
    cl::value_desc("RANK:STEP"), cl::Hidden, cl::sub(trainCommand));
cl::opt<std::string>
    dataDir("data-dir",
            cl::desc("Folder of the dataset's files (default: Debian's)"),
            cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<int64_t> epochs("epochs", cl::desc("Epochs to train"), cl::init(1),
                        cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<int64_t>
    stepsPerEpoch("steps-per-epoch",
                  cl::desc("Batches per epoch (0: all); as Keras, the next "
                           "epoch continues the pass where this one stopped"),
                  cl::init(0), cl::cat(runCategory), cl::sub(trainCommand));
enum class RunMode { Compiled, Interpreted, Both };
cl::opt<RunMode> runMode(
    "mode", cl::desc("How steps run"), cl::init(RunMode::Compiled),
    cl::values(clEnumValN(RunMode::Compiled, "compiled",
                          "JIT-compiled (default)"),
               clEnumValN(RunMode::Interpreted, "interpreted", "op by op"),
               clEnumValN(RunMode::Both, "both",
                          "compiled, then interpreted from the same initial "
                          "weights; compares accuracy and speed")),
    cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<bool> terminateOnNan(
    "terminate-on-nan",
    cl::desc("Stop at the first step whose loss is NaN or inf and name the "
             "layer where the first non-finite value appears (default "
             "true)"),
    cl::init(true), cl::cat(runCategory), cl::sub(trainCommand));
cl::opt<int64_t> repetitions("repetitions",
                             cl::desc("Timed repetitions (medians reported)"),
                             cl::init(5), cl::cat(runCategory),
                             cl::sub(benchCommand));
cl::opt<int64_t> benchSteps("steps", cl::desc("Steps per repetition"),
                            cl::init(20), cl::cat(runCategory),
                            cl::sub(benchCommand));
cl::opt<int64_t> warmup("warmup", cl::desc("Untimed steps first"), cl::init(3),
                        cl::cat(runCategory), cl::sub(benchCommand));
cl::opt<bool> json("json",
                   cl::desc("Print one JSON object (evaluate: the logs, a "
                            "list metric as an array)"),
                   cl::cat(runCategory), cl::sub(benchCommand),
                   cl::sub(evaluateCommand));

// ---- Predict and evaluate ---------------------------------------------------
cl::OptionCategory predictCategory("Predict and evaluate options");
cl::opt<std::string> predictData(
    "data",
    cl::desc("The inputs: a .npz with x (or one array per input layer "
             "name) and, for evaluate, y"),
    cl::value_desc("file"), cl::Required, cl::cat(predictCategory),
    cl::sub(predictCommand), cl::sub(evaluateCommand));
cl::opt<std::string> predictOutput(
    "o",
    cl::desc("Where predict writes the outputs: .npy (one output) or .npz "
             "(one array per output layer name)"),
    cl::value_desc("file"), cl::Required, cl::cat(predictCategory),
    cl::sub(predictCommand));
cl::opt<kcc::ExecMode>
    predictMode("mode", cl::desc("How the model runs"),
                cl::init(kcc::ExecMode::Compiled),
                cl::values(clEnumValN(kcc::ExecMode::Compiled, "compiled",
                                      "JIT-compiled (default)"),
                           clEnumValN(kcc::ExecMode::Interpreted, "interpreted",
                                      "op by op")),
                cl::cat(predictCategory), cl::sub(predictCommand),
                cl::sub(evaluateCommand));

void printVersion(llvm::raw_ostream &os) {
  os << "kcc " KCC_VERSION " (MLIR/LLVM " LLVM_VERSION_STRING ", oneDNN "
     << kcc::kernels::oneDnnVersion() << ")\n";
}

/// kcc's own option categories: --help lists these and nothing else.
const cl::OptionCategory *const kccCategories[] = {
    &modelCategory, &trainStepCategory, &compileCategory, &runCategory,
    &predictCategory};

/// Hides LLVM's and MLIR's own options (hundreds of them, registered by the
/// libraries) from --help; they still work and --help-hidden lists them.
void hideLibraryOptions(cl::SubCommand &sub) {
  for (auto &[name, option] : cl::getRegisteredOptions(sub)) {
    // llvm::cl's own --help, --version, ... sit in its "Generic Options".
    bool ours = llvm::any_of(option->Categories, [](cl::OptionCategory *c) {
      return llvm::is_contained(kccCategories, c) ||
             c->getName() == "Generic Options";
    });
    if (!ours && option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
}

/// The first problem with a numeric flag: every count is in range and every
/// real number finite (llvm::cl parses "-1" and "nan" without complaint).
std::optional<std::string> checkNumericFlags() {
  auto atLeast = [](const cl::opt<int64_t> &o, int64_t min,
                    const char *what) -> std::optional<std::string> {
    if (o < min)
      return "--" + o.ArgStr.str() + " must be " + what + ", got " +
             std::to_string(o);
    return std::nullopt;
  };
  if (auto e = atLeast(batch, 1, "at least 1"))
    return e;
  if (trainCommand) {
    if (auto e = atLeast(epochs, 1, "at least 1"))
      return e;
    if (auto e = atLeast(stepsPerEpoch, 0, "0 (every batch) or more"))
      return e;
    if (auto e = atLeast(validationFreq, 1, "at least 1"))
      return e;
    if (verbose < 0 || verbose > 2)
      return "--verbose must be 0, 1 or 2, got " + std::to_string(verbose);
    if (workers < 0)
      return "--workers must be 0 or more, got " + std::to_string(workers);
    if (!(validationSplit >= 0 && validationSplit < 1)) {
      std::ostringstream value;
      value << validationSplit;
      return "--validation-split must be in [0, 1), got " + value.str();
    }
  }
  if (benchCommand) {
    if (auto e = atLeast(repetitions, 1, "at least 1"))
      return e;
    if (auto e = atLeast(benchSteps, 1, "at least 1"))
      return e;
    if (auto e = atLeast(warmup, 0, "0 or more"))
      return e;
  }
  if (learningRate.getNumOccurrences() &&
      (!std::isfinite(learningRate) || learningRate <= 0)) {
    std::ostringstream value;
    value << learningRate;
    return "--lr must be a positive finite number, got " + value.str();
  }
  if (optLevel > 3)
    return "-O" + std::to_string(optLevel) +
           ": the optimization level is 0 to 3";
  if (coldWork < 0)
    return "--cold-work must be 0 (no function cold) or more, got " +
           std::to_string(coldWork);
  return std::nullopt;
}

/// The commands a flag is an option of, as bits of (1 << Command).
constexpr unsigned bit(Command c) { return 1u << static_cast<unsigned>(c); }
constexpr unsigned inCompile = bit(Command::Compile),
                   inTrain = bit(Command::Train), inBench = bit(Command::Bench),
                   inEvaluate = bit(Command::Evaluate);

/// The first flag given to a command that does not use it, as an error
/// naming the commands that do. llvm::cl accepts the top-level (compile)
/// options in every subcommand, and the train-step options are shared:
/// without this, `kcc train -o x` would be silently ignored.
std::optional<std::string> checkFlagScopes(Command command) {
  const unsigned steps = inCompile | inTrain | inBench;
  const std::pair<const cl::Option *, unsigned> scopes[] = {
      {&loss, steps | inEvaluate},
      {&fromLogits, steps | inEvaluate},
      {&static_cast<cl::Option &>(metrics), steps | inEvaluate},
      {&classWeight, steps},
      {&optimizer, steps},
      {&learningRate, steps},
      {&lrSchedule, steps},
      {&momentum, steps},
      {&nesterov, steps},
      {&beta1, steps},
      {&beta2, steps},
      {&epsilon, steps},
      {&amsgrad, steps},
      {&rho, steps},
      {&centered, steps},
      {&initialAccumulatorValue, steps},
      {&weightDecay, steps},
      {&clipnorm, steps},
      {&clipvalue, steps},
      {&globalClipnorm, steps},
      {&bucketKb, inCompile | inTrain},
      {&emitAction, inCompile},
      {&outputFile, inCompile},
      {&symbolPrefix, inCompile},
      {&mcpu, inCompile},
      {&mattr, inCompile},
      {&planMemory, inCompile},
      {&dedupeKernels, inCompile | inBench},
      {&coldWork, inCompile | inBench},
      {&optLevel, inCompile},
      {&dumpDir, inCompile | inTrain},
      {&fusionReport, inCompile | inTrain},
  };
  auto name = [](unsigned c) -> std::string {
    switch (static_cast<Command>(c)) {
    case Command::Compile:
      return "the compile command (kcc <model>)";
    case Command::Train:
      return "kcc train";
    case Command::Bench:
      return "kcc bench";
    case Command::Predict:
      return "kcc predict";
    case Command::Evaluate:
      return "kcc evaluate";
    }
    return "";
  };
  for (auto [option, commands] : scopes) {
    if (!option->getNumOccurrences() || (commands & bit(command)))
      continue;
    std::vector<std::string> takers;
    for (unsigned c = 0; c < 5; ++c)
      if (commands & (1u << c))
        takers.push_back(name(c));
    std::string list;
    for (size_t i = 0; i < takers.size(); ++i)
      list += (i == 0                   ? ""
               : i + 1 == takers.size() ? " and "
                                        : ", ") +
              takers[i];
    std::string flag =
        (option->ArgStr.size() == 1 ? "-" : "--") + option->ArgStr.str();
    return flag + " is not an option of " +
           name(static_cast<unsigned>(command)) + ": it is one of " + list;
  }
  return std::nullopt;
}

/// kcc's usage: --help's overview, and what bare `kcc` prints.
constexpr const char *kUsage =
    "kcc: compiles Keras-style training steps\n\n"
    "  kcc [options] <model>          compile (--emit=kc|train|linalg|"
    "llvm-mlir|llvm|obj|lib)\n"
    "  kcc train <model> [options]    train on a dataset\n"
    "  kcc bench <model> [options]    compiled vs interpreted steps\n"
    "  kcc predict <model> --data X.npz -o P.npy   the model's outputs\n"
    "  kcc evaluate <model> --data D.npz           loss and metrics\n\n"
    "  <model> is a .mlir file (- reads standard input), a Keras .json, "
    ".keras or .h5\n  file, or --model=mlp|cnn|residual.\n"
    "  kcc train --help, kcc bench --help: the options of each command.\n"
    "  --help-hidden: also LLVM's and MLIR's own options "
    "(--mlir-print-ir-after-all,\n  --mlir-timing, ...), which every "
    "command accepts.\n";

ModelSource modelSource() {
  ModelSource s;
  s.input = inputFile;
  s.builtin = builtinModel;
  s.batch = batch;
  s.seed = seed;
  s.dtypePolicy = dtypePolicy;
  return s;
}

/// The Keras optimizer arguments given as flags, each checked to be one
/// of `opt`'s optimizer (Adam has no momentum).
llvm::Error applyOptimizerArguments(kcc::OptimizerConfig &opt) {
  using K = kcc::OptimizerKind;
  struct Argument {
    cl::Option &flag;
    std::vector<K> kinds;
    std::function<void()> apply;
  };
  const std::vector<K> betas = {K::Adam, K::AdamW, K::Nadam, K::Adamax,
                                K::Lion};
  const Argument arguments[] = {
      {momentum, {K::SGD, K::RMSprop}, [&] { opt.momentum = momentum; }},
      {nesterov, {K::SGD}, [&] { opt.nesterov = nesterov; }},
      {beta1, betas, [&] { opt.beta1 = beta1; }},
      {beta2, betas, [&] { opt.beta2 = beta2.getValue(); }},
      {epsilon,
       {K::Adam, K::AdamW, K::RMSprop, K::Adagrad, K::Nadam, K::Adamax},
       [&] { opt.epsilon = epsilon; }},
      {amsgrad, {K::Adam, K::AdamW}, [&] { opt.amsgrad = amsgrad; }},
      {rho, {K::RMSprop}, [&] { opt.rho = rho; }},
      {centered, {K::RMSprop}, [&] { opt.centered = centered; }},
      {initialAccumulatorValue,
       {K::Adagrad},
       [&] { opt.initialAccumulatorValue = initialAccumulatorValue; }},
  };
  for (const Argument &a : arguments) {
    if (!a.flag.getNumOccurrences())
      continue;
    std::string flag = "--" + a.flag.ArgStr.str();
    if (!llvm::is_contained(a.kinds, opt.kind)) {
      std::string takers;
      for (K k : a.kinds)
        takers += (takers.empty() ? "" : ", ") + kcc::optimizerName(k).str();
      return llvm::createStringError(
          flag + ": the " + kcc::optimizerName(opt.kind).str() +
          " optimizer has no such argument (" + takers + " do)");
    }
    a.apply();
  }
  return llvm::Error::success();
}

/// The layer registry: a line per class (family, name, what kcc reads), or
/// docs/frontend.md's Markdown table.
void printLayerList(llvm::raw_ostream &os, bool markdown) {
  if (markdown) {
    os << kcc::keras::layerTableMarkdown();
    return;
  }
  for (const kcc::keras::LayerClass &cls : kcc::keras::layerClasses()) {
    std::string doc = cls.doc;
    llvm::erase(doc, '`');
    os << llvm::left_justify(cls.family, 15) << llvm::left_justify(cls.name, 24)
       << doc << "\n";
  }
}

} // namespace

Command kcc::driver::parseCommandLine(int argc, char **argv) {
  // MLIR's own options, for the pipelines the compile command runs; the
  // passes are registered so --mlir-print-ir-after=kc-... can name them.
  kcc::registerPasses();
  kcc::registerCodegenPasses();
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  cl::SetVersionPrinter(printVersion);
  // --time-passes is LLVM's own flag (bound to llvm::TimePassesIsEnabled, so
  // it cannot be registered twice): kcc lists it and takes it over below.
  if (cl::Option *timePasses =
          cl::getRegisteredOptions(cl::SubCommand::getTopLevel())
              .lookup("time-passes")) {
    timePasses->addCategory(compileCategory);
    timePasses->setHiddenFlag(cl::NotHidden);
    timePasses->setDescription(
        "Print one time report of the whole compile: every pass of every "
        "pipeline, LLVM's -O<n> and machine-code emission, the JIT link and "
        "the compile cache (every command)");
  }
  for (cl::SubCommand *sub : {&cl::SubCommand::getTopLevel(), &trainCommand,
                              &benchCommand, &predictCommand, &evaluateCommand})
    hideLibraryOptions(*sub);
  cl::ParseCommandLineOptions(argc, argv, kUsage);
  if (listLayers.getNumOccurrences()) {
    if (listLayers != "" && listLayers != "text" && listLayers != "markdown") {
      llvm::WithColor::error(llvm::errs(), "kcc")
          << "--list-layers=" << listLayers << ": expected text or markdown\n";
      std::exit(1);
    }
    printLayerList(llvm::outs(), listLayers == "markdown");
    std::exit(0);
  }
  // One report for the whole compile instead of LLVM's own per-pass tables.
  kcc::enableCompileTiming(llvm::TimePassesIsEnabled);
  llvm::TimePassesIsEnabled = false;
  if (std::optional<std::string> problem = checkNumericFlags()) {
    llvm::WithColor::error(llvm::errs(), "kcc") << *problem << "\n";
    std::exit(1);
  }
  Command command = trainCommand      ? Command::Train
                    : benchCommand    ? Command::Bench
                    : predictCommand  ? Command::Predict
                    : evaluateCommand ? Command::Evaluate
                                      : Command::Compile;
  if (std::optional<std::string> problem = checkFlagScopes(command)) {
    llvm::WithColor::error(llvm::errs(), "kcc") << *problem << "\n";
    std::exit(1);
  }
  // Bare `kcc` shows how to use it; standard input is read only for "-".
  if (command == Command::Compile && inputFile.empty() &&
      builtinModel.empty()) {
    if (argc == 1)
      llvm::outs() << "OVERVIEW: " << kUsage;
    else
      llvm::WithColor::error(llvm::errs(), "kcc")
          << "no model: give a .mlir file (- for standard input), a Keras "
             "spec or --model=mlp|cnn|residual\n";
    std::exit(1);
  }
  return command;
}

CompileConfig kcc::driver::getCompileConfig() {
  CompileConfig c;
  c.source = modelSource();
  c.emit = emitAction;
  c.output = outputFile;
  c.dumpDir = dumpDir;
  c.prefix = symbolPrefix;
  c.cpu.target.cpu = mcpu;
  c.cpu.target.features = mattr;
  c.cpu.target.optLevel = optLevel;
  c.cpu.target.passes = llvmPasses;
  c.cpu.pipeline->planMemory = static_cast<bool>(planMemory);
  if (dedupeKernels.getNumOccurrences())
    c.cpu.pipeline->dedupeKernels = static_cast<bool>(dedupeKernels);
  if (coldWork.getNumOccurrences())
    c.cpu.pipeline->coldWork = static_cast<int64_t>(coldWork);
  c.fusionReport = fusionReport;
  // The report is about the training step: run at least that far.
  if (c.fusionReport && c.emit < EmitAction::LlvmMlir)
    c.emit = EmitAction::LlvmMlir;
  return c;
}

TrainConfig kcc::driver::getTrainConfig() {
  TrainConfig c;
  c.source = modelSource();
  switch (runMode) {
  case RunMode::Compiled:
    c.modes = {ExecMode::Compiled};
    break;
  case RunMode::Interpreted:
    c.modes = {ExecMode::Interpreted};
    break;
  case RunMode::Both:
    c.modes = {ExecMode::Compiled, ExecMode::Interpreted};
    break;
  }
  c.data = dataset;
  c.dataDir = dataDir;
  c.epochs = epochs;
  c.stepsPerEpoch = stepsPerEpoch;
  c.terminateOnNan = terminateOnNan;
  c.validationData = validationData;
  c.validationFreq = validationFreq;
  c.validationSplit = validationSplit;
  c.shuffle = shuffle;
  c.verbose = verbose;
  c.workers = workers;
  c.csvLog = csvLog;
  c.csvAppend = csvAppend;
  if (earlyStopping.getNumOccurrences())
    c.earlyStopping = earlyStopping.getValue();
  if (reduceLrOnPlateau.getNumOccurrences())
    c.reduceLrOnPlateau = reduceLrOnPlateau.getValue();
  if (checkpointFlag.getNumOccurrences())
    c.checkpoint = checkpointFlag.getValue();
  c.save = saveFlag;
  c.saveWeights = saveWeightsFlag;
  c.resume = resumeFlag;
  c.distributed = distributedFlag;
  c.dumpDir = dumpDir;
  c.fusionReport = fusionReport;
  if (!faultExitFlag.empty()) {
    auto [rank, step] = llvm::StringRef(faultExitFlag).split(':');
    int r = 0;
    int64_t s = 0;
    if (rank.getAsInteger(10, r) || step.getAsInteger(10, s) || r < 0 ||
        s < 1) {
      llvm::errs() << "kcc: --fault-exit expects RANK:STEP, got '"
                   << faultExitFlag << "'\n";
      std::exit(1);
    }
    c.faultExit = std::make_pair(r, s);
  }
  return c;
}

BenchConfig kcc::driver::getBenchConfig() {
  BenchConfig c;
  c.source = modelSource();
  c.repetitions = repetitions;
  c.steps = benchSteps;
  c.warmup = warmup;
  c.json = json;
  c.llvmPasses = llvmPasses;
  if (coldWork.getNumOccurrences())
    c.coldWork = coldWork;
  return c;
}

PredictConfig kcc::driver::getPredictConfig() {
  PredictConfig c;
  c.source = modelSource();
  c.data = predictData;
  c.output = predictOutput;
  c.mode = predictMode;
  c.json = json;
  return c;
}

bool kcc::driver::lossFlagGiven() { return loss.getNumOccurrences() > 0; }

llvm::Error kcc::driver::applyTrainingFlags(TrainingConfig &config) {
  if (loss.getNumOccurrences()) {
    // A built-in loss replaces a custom one, arguments and all.
    llvm::Expected<LossConfig> parsed = LossConfig::parse(loss);
    if (!parsed)
      return parsed.takeError();
    config.loss = *parsed;
  }
  if (fromLogits.getNumOccurrences())
    config.loss.fromLogits = fromLogits;
  if (metrics.getNumOccurrences()) {
    // The list splits at every comma: a metric's arguments
    // (`AUC(num_thresholds=50,curve=PR)`) are joined back.
    config.metrics.clear();
    int depth = 0;
    for (const std::string &part : metrics) {
      if (depth > 0)
        config.metrics.back() += "," + part;
      else
        config.metrics.push_back(part);
      for (char c : part)
        depth += (c == '(' || c == '[') - (c == ')' || c == ']');
    }
  }
  if (optimizer.getNumOccurrences()) {
    llvm::Expected<OptimizerKind> kind = parseOptimizer(optimizer);
    if (!kind)
      return kind.takeError();
    // As Keras's compile(optimizer="sgd"): a new optimizer takes its own
    // defaults (learning rate included), not the spec's arguments.
    if (*kind != config.optimizer.kind) {
      config.optimizer = OptimizerConfig();
      config.optimizer.kind = *kind;
    }
  }
  OptimizerConfig &opt = config.optimizer;
  if (llvm::Error err = applyOptimizerArguments(opt))
    return err;
  if (learningRate.getNumOccurrences()) {
    opt.learningRate = learningRate;
    opt.schedule.reset(); // the flag overrides the spec's schedule
  }
  if (lrSchedule.getNumOccurrences()) {
    llvm::Expected<LearningRateSchedule> s =
        LearningRateSchedule::parse(lrSchedule);
    if (!s)
      return s.takeError();
    opt.schedule = std::move(*s);
  }
  if (classWeight.getNumOccurrences()) {
    auto weights = parseClassWeight(classWeight);
    if (!weights)
      return llvm::createStringError("--class-weight: " +
                                     llvm::toString(weights.takeError()));
    config.classWeight = std::move(*weights);
  }
  if (dataParallel)
    config.dataParallel = true;
  if (bucketKb <= 0 || bucketKb > (int64_t(1) << 40))
    return llvm::createStringError("--all-reduce-bucket-kb must be in [1, "
                                   "2^40], got " +
                                   std::to_string(bucketKb));
  config.bucketBytes = bucketKb * 1024;
  if (weightDecay.getNumOccurrences())
    opt.weightDecay = weightDecay;
  // One clipping flag replaces whatever clipping the spec asked for.
  if (clipnorm.getNumOccurrences() || clipvalue.getNumOccurrences() ||
      globalClipnorm.getNumOccurrences()) {
    opt.clipnorm = clipnorm;
    opt.clipvalue = clipvalue;
    opt.globalClipnorm = globalClipnorm;
  }
  return llvm::Error::success();
}
