//===- ResumeTest.cpp - A resumed fit continues bit for bit ---------------===//
//
// Two epochs in one Executable against one epoch, a .keras checkpoint, a
// new Executable built from the reloaded model with the optimizer's
// variables, iteration count and learning rate restored, and the second
// epoch: the weights and the slots must be the same bits. The model has
// Dropout, whose masks are drawn from the step count, so a wrong count
// shows. Without the optimizer state the weights must differ (the test can
// fail).
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"
#include "frontend/training/Jit.h"

using namespace kcc;
using namespace kcc::saving_test;

namespace {

constexpr int64_t kBatch = 8;
constexpr int kStepsPerEpoch = 6;

TrainingConfig configFor(ExecMode mode) {
  TrainingConfig config;
  config.batch = kBatch;
  config.mode = mode;
  config.metrics = {"accuracy"};
  return config;
}

Executable makeExe(Model &model, const TrainingConfig &config) {
  JitOptions quiet;
  quiet.log = nullptr;
  return jit(model, config, quiet);
}

/// One epoch: the same batches every epoch, as an unshuffled fit.
void runEpoch(Executable &exe) {
  for (int i = 0; i < kStepsPerEpoch; ++i)
    exe.step(randomImages({kBatch, 8, 8, 1}, 10 + i),
             randomLabels(kBatch, 3, 20 + i));
}

bool sameBits(const std::vector<NDArray> &a, const std::vector<NDArray> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].bytes() != b[i].bytes() ||
        std::memcmp(a[i].rawData(), b[i].rawData(), a[i].bytes()) != 0)
      return false;
  return true;
}

class Resume : public ::testing::TestWithParam<ExecMode> {};

TEST_P(Resume, OneEpochSaveLoadOneEpochEqualsTwoEpochs) {
  TrainingConfig config = configFor(GetParam());
  std::string path = tempDir() + "/ckpt.keras";

  Sequential straight = makeCnn();
  Executable exeA = makeExe(straight, config);
  runEpoch(exeA);
  runEpoch(exeA);

  Sequential first = makeCnn();
  Executable exeB = makeExe(first, config);
  runEpoch(exeB);
  keras::saveKerasArchive(path, first, captureState(exeB, /*epoch=*/1), config);

  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_EQ(ckpt.epoch, 1);
  Executable exeC = makeExe(*ckpt.imported.model, config);
  restoreState(exeC, ckpt);
  EXPECT_EQ(exeC.iterations(), kStepsPerEpoch);
  runEpoch(exeC);

  EXPECT_EQ(exeC.iterations(), exeA.iterations());
  EXPECT_TRUE(sameBits(exeA.getWeights(), exeC.getWeights()))
      << "resumed weights differ from two epochs in one run";
  EXPECT_TRUE(sameBits(exeA.getOptimizerState(), exeC.getOptimizerState()))
      << "resumed optimizer slots differ";

  // The weights alone are not enough: fresh slots and a step count of 0
  // give other weights.
  Executable exeD =
      makeExe(*keras::loadCheckpoint(path).imported.model, config);
  runEpoch(exeD);
  EXPECT_FALSE(sameBits(exeA.getWeights(), exeD.getWeights()));
}

TEST_P(Resume, ACheckpointWithoutOptimizerStateIsRefused) {
  TrainingConfig config = configFor(GetParam());
  std::string path = tempDir() + "/weights-only.keras";
  Sequential model = makeCnn();
  keras::saveKerasArchive(path, model,
                          keras::ModelState{model.getWeights(), {}, 0}, config);
  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  EXPECT_FALSE(ckpt.optimizer);
  Executable exe = makeExe(*ckpt.imported.model, config);
  try {
    restoreState(exe, ckpt);
    ADD_FAILURE() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(path + ": no optimizer state"),
              std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Resume, ::testing::Values(ExecMode::Compiled, ExecMode::Interpreted),
    [](const auto &info) { return std::string(execModeName(info.param)); });

} // namespace
