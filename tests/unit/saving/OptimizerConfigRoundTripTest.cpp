//===- OptimizerConfigRoundTripTest.cpp - compile_config out and back ----===//
//
// Every optimizer fixture Keras 3 wrote (tests/fixtures/keras/optimizers):
// import, save the model with the imported training configuration (the
// compile_config kcc writes itself, not the original text), import again:
// the same TrainingConfig, every field, schedules and clipping included.
// And the optimizer state kcc saves for each reloads into the same slots
// (Nadam's u_product, RMSprop's velocity-first order, no learning_rate
// variable under a schedule).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"
#include "frontend/training/Jit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

using namespace kcc;
using namespace kcc::saving_test;

namespace {

std::vector<std::string> optimizerFixtures() {
  std::vector<std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator
           it(KCC_KERAS_FIXTURES "/optimizers", ec),
       end;
       !ec && it != end; it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".keras")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  return files;
}

void expectSameSchedule(const LearningRateSchedule &a,
                        const LearningRateSchedule &b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.str(), b.str());
  EXPECT_EQ(a.initialLearningRate, b.initialLearningRate);
  EXPECT_EQ(a.decaySteps, b.decaySteps);
  EXPECT_EQ(a.decayRate, b.decayRate);
  EXPECT_EQ(a.staircase, b.staircase);
  EXPECT_EQ(a.boundaries, b.boundaries);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.endLearningRate, b.endLearningRate);
  EXPECT_EQ(a.power, b.power);
  EXPECT_EQ(a.cycle, b.cycle);
  EXPECT_EQ(a.alpha, b.alpha);
  EXPECT_EQ(a.warmupTarget, b.warmupTarget);
  EXPECT_EQ(a.warmupSteps, b.warmupSteps);
  EXPECT_EQ(a.tMul, b.tMul);
  EXPECT_EQ(a.mMul, b.mMul);
}

void expectSameConfig(const TrainingConfig &a, const TrainingConfig &b) {
  EXPECT_EQ(a.loss.kind, b.loss.kind);
  EXPECT_EQ(a.loss.fromLogits, b.loss.fromLogits);
  EXPECT_EQ(a.metrics, b.metrics);
  const OptimizerConfig &x = a.optimizer, &y = b.optimizer;
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.learningRate, y.learningRate);
  ASSERT_EQ(x.schedule.has_value(), y.schedule.has_value());
  if (x.schedule)
    expectSameSchedule(*x.schedule, *y.schedule);
  EXPECT_EQ(x.momentum, y.momentum);
  EXPECT_EQ(x.nesterov, y.nesterov);
  EXPECT_EQ(x.beta1, y.beta1);
  EXPECT_EQ(x.beta2, y.beta2);
  EXPECT_EQ(x.epsilon, y.epsilon);
  EXPECT_EQ(x.rho, y.rho);
  EXPECT_EQ(x.initialAccumulatorValue, y.initialAccumulatorValue);
  EXPECT_EQ(x.weightDecay, y.weightDecay);
  EXPECT_EQ(x.clipnorm, y.clipnorm);
  EXPECT_EQ(x.clipvalue, y.clipvalue);
  EXPECT_EQ(x.globalClipnorm, y.globalClipnorm);
}

TEST(OptimizerConfigRoundTrip, EveryFixtureImportsSavesAndImportsTheSame) {
  std::vector<std::string> files = optimizerFixtures();
  ASSERT_GE(files.size(), 20u);
  std::string dir = tempDir();
  for (const std::string &file : files) {
    SCOPED_TRACE(file);
    keras::ImportedModel first = keras::importFile(file);
    ASSERT_TRUE(first.training) << file;
    ASSERT_EQ(first.trainingError, "");
    keras::ModelState state;
    state.weights = first.model->getWeights();
    std::string out = dir + "/" + llvm::sys::path::filename(file).str();
    // The Model overload: compile_config is kcc's own serialization.
    keras::saveKerasArchive(out, *first.model, state, *first.training);
    keras::ImportedModel second = keras::importFile(out);
    ASSERT_TRUE(second.training);
    EXPECT_EQ(second.trainingError, "");
    expectSameConfig(*first.training, *second.training);
  }
}

TEST(OptimizerConfigRoundTrip, OptimizerStateReloadsIntoTheSameSlots) {
  std::string dir = tempDir();
  for (const std::string &file : optimizerFixtures()) {
    SCOPED_TRACE(file);
    keras::ImportedModel imported = keras::importFile(file);
    TrainingConfig config = *imported.training;
    config.batch = 4;
    JitOptions quiet;
    quiet.log = nullptr;
    Executable exe = jit(*imported.model, config, quiet);
    // Distinct values in every slot, so a permutation shows.
    std::vector<NDArray> slots = exe.getOptimizerState();
    float v = 0.25f;
    for (NDArray &s : slots) {
      NDArray filled = NDArray::zeros(s.shape(), s.dtype());
      for (int64_t i = 0; i < filled.numel(); ++i)
        filled.set(i, v += 0.125f);
      s = filled;
    }
    exe.setOptimizerState(slots);
    exe.setIterations(7);
    std::string out = dir + "/" + llvm::sys::path::filename(file).str();
    keras::saveKerasArchive(out, imported, captureState(exe, 1), config);
    keras::Checkpoint ckpt = keras::loadCheckpoint(out);
    ASSERT_TRUE(ckpt.optimizer);
    EXPECT_EQ(ckpt.optimizer->iterations, 7);
    ASSERT_EQ(ckpt.optimizer->slots.size(), slots.size());
    for (size_t i = 0; i < slots.size(); ++i)
      EXPECT_EQ(ckpt.optimizer->slots[i].toVector(), slots[i].toVector())
          << "slot " << i;
  }
}

} // namespace
