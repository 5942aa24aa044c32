//===- kcc.cpp - The kcc compiler driver ----------------------------------===//
//
// kcc compiles a model (a .mlir file of kc ops, a Keras spec or a reference
// model) up to the stage --emit names, trains it (`kcc train`) or times its
// compiled step against the interpreted one (`kcc bench`). Options.cpp owns
// the command line; each command lives in its own file.
//
//===----------------------------------------------------------------------===//

#include "Compile.h"
#include "Diagnostics.h"
#include "Options.h"
#include "Run.h"

#include "engine/CompileTiming.h"
#include "runtime/Error.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"

using namespace kcc::driver;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::InitializeNativeTargetAsmParser();
  Command command = parseCommandLine(argc, argv);
  int status = 1;
  try {
    switch (command) {
    case Command::Compile:
      status = runCompile(getCompileConfig());
      break;
    case Command::Train:
      status = runTrain(getTrainConfig());
      break;
    case Command::Bench:
      status = runBench(getBenchConfig());
      break;
    case Command::Predict:
      status = runPredict(getPredictConfig());
      break;
    case Command::Evaluate:
      status = runEvaluate(getPredictConfig());
      break;
    }
  } catch (const kcc::Error &e) {
    // Model and spec errors name the file, the JSON path and the layer.
    status = fail(e.what());
  }
  // --time-passes: the compile's phases, whichever command ran them.
  kcc::printCompileTimeReport();
  return status;
}
