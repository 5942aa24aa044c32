//===- Options.h - kcc's command line, as plain structs ---------*- C++ -*-===//
//
// The llvm::cl options live in Options.cpp alone; the rest of the driver
// sees these structs (configuration travels in structs, never in globals).
//
//   kcc [compile options] INPUT            compile: --emit=kc ... lib
//   kcc train SPEC --data fashion-mnist    train with a progress bar
//   kcc bench SPEC --batch B [--json]      compiled vs interpreted steps
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_OPTIONS_H
#define KCC_TOOLS_KCC_OPTIONS_H

#include "config/TrainingConfig.h"
#include "engine/CompiledFunction.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kcc {
namespace driver {

/// Ordered as in Toy's toyc: each action lowers further than the one before.
enum class EmitAction { Kc, Train, Linalg, Fused, LlvmMlir, Llvm, Obj, Lib };

enum class Command { Compile, Train, Bench, Predict, Evaluate };

/// Where the model comes from: a file (.mlir holding @forward, or a Keras
/// .json / .keras / .h5 spec) or a reference model built in C++.
struct ModelSource {
  std::string input;   ///< path or "-"; empty with --model
  std::string builtin; ///< mlp | cnn | residual, or empty
  int64_t batch = 32;
  uint64_t seed = 0;
  /// --dtype-policy: Keras's global policy applied to every layer; empty
  /// keeps the model's own.
  std::string dtypePolicy;
};

struct CompileConfig {
  ModelSource source;
  EmitAction emit = EmitAction::Kc;
  std::string output = "-";
  std::string dumpDir;
  /// Prepended to the public function names from --emit=linalg on.
  std::string prefix;
  /// How the CPU code is built: the JIT's options type, so --emit shows
  /// what the JIT compiles (-mcpu, -mattr, -O, --plan-memory set it).
  CpuOptions cpu;
  /// Print what the CPU pipeline fused, refused and planned, and stop.
  bool fusionReport = false;
};

struct TrainConfig {
  ModelSource source;
  /// Runs in order; two (compiled, interpreted) train both from the same
  /// initial weights on the same batches and compare them.
  std::vector<ExecMode> modes = {ExecMode::Compiled};
  std::string data = "fashion-mnist";
  std::string dataDir;
  int64_t epochs = 1;
  /// Stop each epoch after this many steps (0: all).
  int64_t stepsPerEpoch = 0;
  /// Stop at the first non-finite loss and name the layer it came from
  /// (Keras's TerminateOnNaN; on unless --terminate-on-nan=false).
  bool terminateOnNan = true;
  /// Validation data (a .npz archive or a folder of .npy files), or the
  /// last fraction of the training data (Keras's validation_split).
  std::string validationData;
  double validationSplit = 0;
  /// Validate after every validationFreq-th epoch.
  int64_t validationFreq = 1;
  bool shuffle = true;
  /// Keras's verbose: 0 silent, 1 progress bar, 2 one line per epoch.
  int verbose = 1;
  /// Threads reading batches ahead of the step.
  int workers = 1;
  /// CSVLogger: the file, and whether to append to it.
  std::string csvLog;
  bool csvAppend = false;
  /// The raw key=value lists of --early-stopping and
  /// --reduce-lr-on-plateau (CallbackFlags.h parses them); unset if absent.
  std::optional<std::string> earlyStopping, reduceLrOnPlateau;
  /// --checkpoint's key=value list (ModelCheckpoint); unset if absent.
  std::optional<std::string> checkpoint;
  /// After training: the .keras archive and the .weights.h5 file to write
  /// (empty: none).
  std::string save, saveWeights;
  /// A .keras checkpoint to resume from (weights, optimizer state, step
  /// count, and the epoch to start at); it is the model then.
  std::string resume;
  /// Train data-parallel when an MPI launcher started the process (off:
  /// each process trains alone).
  bool distributed = true;
  /// Write the stages of the step trained here (01-kc.mlir ... 06-llvm.ll).
  std::string dumpDir;
  /// Print the fusion report of the step trained, before training it.
  bool fusionReport = false;
  /// Testing faults: rank `first` exits (without MPI_Finalize) after step
  /// `second` of the run.
  std::optional<std::pair<int, int64_t>> faultExit;
};

struct BenchConfig {
  ModelSource source;
  int64_t repetitions = 5;
  int64_t steps = 20;
  int64_t warmup = 3;
  bool json = false;
  /// --llvm-passes: the compiled step's LLVM IR pipeline (empty: kcc's).
  std::string llvmPasses;
  /// --cold-work: kc-mark-cold-functions' threshold (none: the pipeline's).
  std::optional<int64_t> coldWork;
};

/// kcc predict / kcc evaluate (Predict.cpp).
struct PredictConfig {
  ModelSource source;
  /// The .npz (or, for one input, .npy) of inputs; evaluate adds y.
  std::string data;
  /// predict: .npy (one output) or .npz (one array per output).
  std::string output;
  ExecMode mode = ExecMode::Compiled;
  /// evaluate: the logs as one JSON object (a list metric as an array).
  bool json = false;
};

/// Parses argv (MLIR's own options must be registered first); exits with a
/// message on a malformed command line, as llvm::cl does.
Command parseCommandLine(int argc, char **argv);

/// Applies the training flags that were given (--loss, --optimizer, --lr,
/// --from-logits, --metrics) to `config`, names parsed; the others leave it
/// as it is, so flags override what the model file says.
llvm::Error applyTrainingFlags(TrainingConfig &config);
/// Whether --loss was given.
bool lossFlagGiven();

CompileConfig getCompileConfig();
TrainConfig getTrainConfig();
BenchConfig getBenchConfig();
PredictConfig getPredictConfig();

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_OPTIONS_H
