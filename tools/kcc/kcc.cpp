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
  try {
    switch (command) {
    case Command::Compile:
      return runCompile(getCompileConfig());
    case Command::Train:
      return runTrain(getTrainConfig());
    case Command::Bench:
      return runBench(getBenchConfig());
    case Command::Predict:
      return runPredict(getPredictConfig());
    case Command::Evaluate:
      return runEvaluate(getPredictConfig());
    }
  } catch (const kcc::Error &e) {
    // Model and spec errors name the file, the JSON path and the layer.
    return fail(e.what());
  }
  return 1;
}
