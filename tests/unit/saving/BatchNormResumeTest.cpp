//===- BatchNormResumeTest.cpp - Resuming keeps the moving statistics -----===//
//
// The ResNet fixture (BatchNormalization after each convolution) on the
// first Fashion-MNIST batches: two epochs in one Executable against one
// epoch, a .keras checkpoint, the reloaded model with the optimizer state
// restored, and the second epoch. The trainable weights, the moving means
// and variances (non-trainable, updated inside the step) and Adam's slots
// must be the same bits.
//
//===----------------------------------------------------------------------===//

#include "tests/unit/saving/SavingTestUtil.h"

#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"
#include "frontend/training/Jit.h"
#include "runtime/data/Dataset.h"

#include "llvm/ADT/StringRef.h"

using namespace kcc;
using namespace kcc::saving_test;

namespace {

constexpr int64_t kBatch = 16;
constexpr int64_t kStepsPerEpoch = 4;

const Dataset &fashionTrain() {
  static const FashionMnist data = loadFashionMnist();
  return data.train;
}

std::string resnetPath() {
  return std::string(KCC_KERAS_FIXTURES) + "/resnet.keras";
}

Executable makeExe(Model &model, const TrainingConfig &config) {
  JitOptions quiet;
  quiet.log = nullptr;
  return jit(model, config, quiet);
}

/// One epoch: the first kStepsPerEpoch batches, unshuffled.
void runEpoch(Executable &exe) {
  BatchIterator batches(fashionTrain(), kBatch, /*shuffle=*/false, 0);
  batches.startEpoch(0);
  NDArray x, y;
  for (int64_t i = 0; i < kStepsPerEpoch; ++i) {
    batches.batch(i, x, y);
    exe.step(x, y);
  }
}

/// Compares `a` and `b` parameter by parameter, bitwise; names the first
/// that differs.
void expectSameBits(const std::vector<Parameter> &params,
                    const std::vector<NDArray> &a,
                    const std::vector<NDArray> &b, const std::string &what) {
  ASSERT_EQ(a.size(), params.size()) << what;
  ASSERT_EQ(b.size(), params.size()) << what;
  for (size_t i = 0; i < params.size(); ++i)
    expectIdentical(a[i], b[i], what + " " + params[i].name);
}

bool isMovingStatistic(const Parameter &p) {
  llvm::StringRef name(p.name);
  return name.ends_with("/moving_mean") || name.ends_with("/moving_variance");
}

class BatchNormResume : public ::testing::TestWithParam<ExecMode> {};

TEST_P(BatchNormResume, ResNetMovingStatisticsResumeBitForBit) {
  TrainingConfig config;
  config.batch = kBatch;
  config.mode = GetParam();
  config.metrics = {"accuracy"};
  std::string path = tempDir() + "/resnet-ckpt.keras";

  keras::ImportedModel straight = keras::importFile(resnetPath());
  std::vector<Parameter> params = straight.model->parameters();
  std::vector<NDArray> initial = straight.model->getWeights();
  ASSERT_GE(llvm::count_if(params, isMovingStatistic), 10)
      << "the ResNet fixture should hold BatchNormalization layers";
  Executable exeA = makeExe(*straight.model, config);
  runEpoch(exeA);
  runEpoch(exeA);

  keras::ImportedModel first = keras::importFile(resnetPath());
  Executable exeB = makeExe(*first.model, config);
  runEpoch(exeB);
  keras::saveKerasArchive(path, *first.model, captureState(exeB, /*epoch=*/1),
                          config);

  keras::Checkpoint ckpt = keras::loadCheckpoint(path);
  ASSERT_EQ(ckpt.epoch, 1);
  Executable exeC = makeExe(*ckpt.imported.model, config);
  restoreState(exeC, ckpt);
  ASSERT_EQ(exeC.iterations(), kStepsPerEpoch);
  runEpoch(exeC);

  EXPECT_EQ(exeC.iterations(), exeA.iterations());
  std::vector<NDArray> two = exeA.getWeights(), resumed = exeC.getWeights();
  expectSameBits(params, two, resumed, "resumed");
  std::vector<NDArray> slotsA = exeA.getOptimizerState(),
                       slotsC = exeC.getOptimizerState();
  ASSERT_EQ(slotsA.size(), slotsC.size());
  for (size_t i = 0; i < slotsA.size(); ++i)
    expectIdentical(slotsA[i], slotsC[i], "slot " + std::to_string(i));

  // The statistics moved in training (the comparison is not of initial
  // values), and a resume without the optimizer state lands elsewhere.
  for (size_t i = 0; i < params.size(); ++i)
    if (isMovingStatistic(params[i]))
      EXPECT_NE(0, std::memcmp(initial[i].rawData(), two[i].rawData(),
                               two[i].bytes()))
          << params[i].name << " did not change in training";
  keras::ImportedModel weightsOnly = keras::importFile(path);
  Executable exeD = makeExe(*weightsOnly.model, config);
  runEpoch(exeD);
  std::vector<NDArray> fresh = exeD.getWeights();
  bool anyDiffers = false;
  for (size_t i = 0; i < params.size(); ++i)
    anyDiffers |=
        std::memcmp(two[i].rawData(), fresh[i].rawData(), two[i].bytes()) != 0;
  EXPECT_TRUE(anyDiffers) << "fresh optimizer state gave the same weights";
}

INSTANTIATE_TEST_SUITE_P(Modes, BatchNormResume,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const auto &info) {
                           return std::string(execModeName(info.param));
                         });

} // namespace
