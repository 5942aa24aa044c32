//===- Run.h - kcc's train and bench commands -------------------*- C++ -*-===//
//
// Both build the model's training step with kcc::jit's pieces
// (buildTrainModule) and run it through a runtime Executable, compiled or
// interpreted: the same path an embedding program takes.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_TOOLS_KCC_RUN_H
#define KCC_TOOLS_KCC_RUN_H

#include "Options.h"

namespace kcc {
namespace driver {

/// `kcc train`: epochs with a Keras-style progress bar, then test accuracy.
int runTrain(const TrainConfig &config);

/// `kcc bench`: median step times compiled and interpreted, kernel counts,
/// the memory plan; with --json one object on stdout.
int runBench(const BenchConfig &config);

int runPredict(const PredictConfig &config);

int runEvaluate(const PredictConfig &config);

} // namespace driver
} // namespace kcc

#endif // KCC_TOOLS_KCC_RUN_H
