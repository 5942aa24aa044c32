//===- ResumeParityTest.cpp - Resuming optimizer state Keras saved --------===//
//
// tests/fixtures/keras/resume (written by Keras 3 itself, see
// scripts/keras-fixtures/make_resume_fixtures.py): Keras trained 3 steps,
// saved the .keras (its model.weights.h5 holds the optimizer's iterations,
// learning rate and slots), then trained 5 more. Resumed from that archive
// (loadCheckpoint and the Trainer, as `kcc train --resume` does), kcc's 5
// further steps must reproduce Keras's 5 losses within 1e-4, compiled and
// interpreted: wrong slots or a wrong iteration count (Adam's bias
// correction) would not.
//
//===----------------------------------------------------------------------===//

#include "KerasFixtureUtil.h"

#include "frontend/keras/Saving.h"
#include "frontend/training/Trainer.h"

#include "llvm/Support/JSON.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <tuple>

using namespace kcc;
namespace json = llvm::json;

namespace {

class ResumeParity
    : public ::testing::TestWithParam<std::tuple<std::string, ExecMode>> {};

TEST_P(ResumeParity, FiveStepsAfterKerasSavedMatchKeras) {
  const auto &[name, mode] = GetParam();
  static const json::Value root = e2e::readFixtureJson("resume/resume.json");
  const json::Object &record = *root.getAsObject()->getObject(name);
  keras::Checkpoint ckpt = keras::loadCheckpoint(
      e2e::kerasFixture("resume/resume_" + name + ".keras"));
  ASSERT_TRUE(ckpt.imported.weightsLoaded);
  ASSERT_TRUE(ckpt.optimizer.has_value())
      << name << ": no optimizer state read from Keras's archive";
  EXPECT_EQ(ckpt.optimizer->iterations,
            *record.getInteger("iterations_at_save"));
  EXPECT_EQ(ckpt.epoch, 0);
  TrainingConfig config = *ckpt.imported.training;
  config.batch = 32;
  config.mode = mode;
  Trainer trainer(*ckpt.imported.model, config, /*log=*/nullptr);
  trainer.restoreOptimizerState(ckpt.optimizer->slots,
                                ckpt.optimizer->iterations,
                                ckpt.optimizer->learningRate);
  NDArray x, y;
  e2e::kerasBatch(x, y);
  x = x.reshaped({32, 784});
  std::vector<double> want = e2e::numbers(*record.getArray("losses_after"));
  double worst = 0;
  for (size_t s = 0; s < want.size(); ++s) {
    double loss = trainer.trainOnBatch(x, y).loss;
    double rel = std::abs(loss - want[s]) / std::abs(want[s]);
    worst = std::max(worst, rel);
    EXPECT_LE(rel, 1e-4) << name << " step " << s << ": Keras " << want[s]
                         << ", kcc " << loss;
  }
  EXPECT_EQ(trainer.iterations(),
            ckpt.optimizer->iterations + static_cast<int64_t>(want.size()));
  std::printf("[ keras ] resume %-13s %-11s 5 steps: worst rel %.1e\n",
              name.c_str(),
              mode == ExecMode::Compiled ? "compiled" : "interpreted", worst);
}

INSTANTIATE_TEST_SUITE_P(
    KerasResume, ResumeParity,
    ::testing::Combine(
        ::testing::Values(std::string("adam"), std::string("sgd_momentum"),
                          std::string("rmsprop")),
        ::testing::Values(ExecMode::Compiled, ExecMode::Interpreted)),
    [](const auto &info) {
      return std::get<0>(info.param) +
             (std::get<1>(info.param) == ExecMode::Compiled ? "_compiled"
                                                            : "_interpreted");
    });

} // namespace
