//===- Checkpoint.cpp - An Executable's state to and from .keras files ----===//

#include "frontend/training/Checkpoint.h"

using namespace kcc;

keras::ModelState kcc::captureState(const Executable &exe, int64_t epoch) {
  keras::ModelState state;
  state.weights = exe.getWeights();
  state.epoch = epoch;
  if (exe.hasTrainStep())
    state.optimizer = keras::OptimizerState{
        exe.getOptimizerState(), exe.iterations(), exe.learningRate()};
  return state;
}

void kcc::restoreState(Executable &exe, const keras::Checkpoint &checkpoint) {
  const std::string &source = checkpoint.source;
  if (!checkpoint.optimizer)
    throw Error(source + ": no optimizer state to resume from (an archive "
                         "kcc did not write, or saved without training)");
  try {
    exe.setWeights(checkpoint.imported.model->getWeights());
    exe.setOptimizerState(checkpoint.optimizer->slots);
  } catch (const Error &e) {
    throw Error(source +
                ": the checkpoint does not fit the model: " + e.what());
  }
  exe.setIterations(checkpoint.optimizer->iterations);
  exe.setLearningRate(checkpoint.optimizer->learningRate);
}
