//===- DataParallelTest.cpp - N ranks train as one process does -----------===//
//
// Run by ctest under `mpirun -np 2`. Every rank also trains the single-
// process reference itself (the step on the whole global batch), so each
// check compares, on every rank, the data-parallel run against the one
// process it must reproduce: for the MLP and the CNN, compiled and
// interpreted, 20 Adam steps on the same global batches agree on the loss
// (the ranks' mean, relative) and on every weight within 1e-5 (absolute);
// summation order is the only difference. Through the Trainer, ranks that start
// from different weights end with rank 0's training, a partial last batch
// trains as in one process, and a batch smaller than the number of ranks is an
// error.
//
//===----------------------------------------------------------------------===//

#include "frontend/models/ReferenceModels.h"
#include "frontend/training/Distributed.h"
#include "frontend/training/Jit.h"
#include "frontend/training/Trainer.h"
#include "runtime/Error.h"
#include "runtime/data/Dataset.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace kcc;

namespace {

constexpr double kTol = 1e-5;
constexpr int kSteps = 20;

Distributed &job() {
  static Distributed d = Distributed::fromEnvironment();
  return d;
}

const FashionMnist &fashionMnist() {
  static const FashionMnist data = loadFashionMnist();
  return data;
}

std::unique_ptr<Model> buildModel(const std::string &name, uint64_t seed) {
  return name == "mlp" ? models::buildMlp(seed) : models::buildCnn(seed);
}

/// Rows [begin, end) of `a`, copied.
NDArray rows(const NDArray &a, int64_t begin, int64_t end) {
  Shape shape = a.shape();
  int64_t rowBytes = static_cast<int64_t>(a.bytes()) / shape[0];
  shape[0] = end - begin;
  NDArray out = NDArray::empty(shape, a.dtype());
  std::memcpy(out.data<char>(),
              static_cast<const char *>(a.rawData()) + begin * rowBytes,
              (end - begin) * rowBytes);
  return out;
}

/// The largest error of `actual` against `expected`, relative to the larger
/// of the element and the tensor's largest magnitude.
double maxRelError(const NDArray &expected, const NDArray &actual) {
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < expected.numel(); ++i)
    scale = std::max(scale, std::abs(expected.at(i)));
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.at(i), a = actual.at(i);
    if (std::isnan(a) || std::isnan(e))
      return INFINITY;
    worst = std::max(worst,
                     std::abs(e - a) / std::max({std::abs(e), scale, 1e-30}));
  }
  return worst;
}

double maxAbsDiff(const NDArray &a, const NDArray &b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.at(i) - b.at(i)));
  return worst;
}

/// kSteps steps of `one` on each global batch of `global` rows and of `dp`
/// on this rank's `local` rows of it; the worst error of the ranks' mean
/// loss against `one`'s, relative to max(1, |loss|).
double stepBoth(Executable &one, Executable &dp, int64_t global,
                int64_t local) {
  const FashionMnist &data = fashionMnist();
  double worstLoss = 0;
  for (int s = 0; s < kSteps; ++s) {
    int64_t begin = s * global, mine = begin + job().rank() * local;
    StepResult ref = one.step(rows(data.train.x, begin, begin + global),
                              rows(data.train.y, begin, begin + global));
    StepResult r = dp.step(rows(data.train.x, mine, mine + local),
                           rows(data.train.y, mine, mine + local));
    double loss = job().mean({r.loss})[0];
    worstLoss = std::max(worstLoss, std::abs(loss - ref.loss) /
                                        std::max(1.0, std::abs(ref.loss)));
  }
  return worstLoss;
}

TrainingConfig configFor(const std::string &model, ExecMode mode, int64_t batch,
                         bool dataParallel) {
  TrainingConfig c;
  c.batch = batch;
  c.mode = mode;
  c.metrics = {"accuracy"};
  c.loss.fromLogits = model != "mlp";
  c.dataParallel = dataParallel;
  return c;
}

struct Case {
  std::string model;
  ExecMode mode;
};

class TwentySteps : public ::testing::TestWithParam<Case> {};

TEST_P(TwentySteps, LossesAndEveryWeightMatchOneProcess) {
  const Case &c = GetParam();
  int n = job().size(), rank = job().rank();
  ASSERT_GT(n, 1) << "run under mpirun -np 2 (or more)";
  const int64_t global = c.model == "mlp" ? 32 : 8, local = global / n;
  ASSERT_EQ(global % n, 0);
  std::unique_ptr<Model> model = buildModel(c.model, /*seed=*/5);
  JitOptions quiet;
  quiet.log = nullptr;
  Executable one =
      jit(*model, configFor(c.model, c.mode, global, false), quiet);
  Executable dp = jit(*model, configFor(c.model, c.mode, local, true), quiet);
  EXPECT_NE(dp.moduleText().find("kc.all_reduce"), std::string::npos);
  EXPECT_EQ(one.moduleText().find("kc.all_reduce"), std::string::npos);
  std::vector<NDArray> initial = one.getWeights();
  dp.setWeights(initial);

  double worstLoss = stepBoth(one, dp, global, local);
  EXPECT_LE(worstLoss, kTol);
  std::vector<NDArray> expected = one.getWeights(), actual = dp.getWeights();
  std::vector<std::string> names = one.weightNames();
  ASSERT_EQ(expected.size(), actual.size());
  // Absolute: Adam divides by sqrt(v) + 1e-7, so a gradient near zero
  // turns a last-bit difference of the sum into one of lr * g / eps, which
  // is large relative to a bias that started at zero, not to 1e-5.
  double worstWeight = 0, worstRel = 0, moved = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    double e = maxAbsDiff(expected[i], actual[i]);
    EXPECT_LE(e, kTol) << names[i];
    worstWeight = std::max(worstWeight, e);
    worstRel = std::max(worstRel, maxRelError(expected[i], actual[i]));
    moved = std::max(moved, maxAbsDiff(initial[i], expected[i]));
  }
  // The comparison means something only if training moved the weights.
  EXPECT_GT(moved, 1e-3);
  if (rank == 0)
    std::printf("[%s %s] %d ranks, %d steps of %lld: max loss error %.2e, "
                "max weight error %.2e (%.2e of the tensor's scale)\n",
                c.model.c_str(), execModeName(c.mode), n, kSteps,
                static_cast<long long>(global), worstLoss, worstWeight,
                worstRel);
}

INSTANTIATE_TEST_SUITE_P(Models, TwentySteps,
                         ::testing::Values(Case{"mlp", ExecMode::Compiled},
                                           Case{"mlp", ExecMode::Interpreted},
                                           Case{"cnn", ExecMode::Compiled},
                                           Case{"cnn", ExecMode::Interpreted}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           return info.param.model + "_" +
                                  execModeName(info.param.mode);
                         });

/// Trainer::fit with the global batch: each rank its slice, rank 0's
/// initial weights (rank 1 starts from others), the same training as one
/// process on the whole batches.
TEST(TrainerDataParallel, FitMatchesOneProcessFromRankZerosWeights) {
  int rank = job().rank();
  const FashionMnist &data = fashionMnist();
  Dataset train{rows(data.train.x, 0, 20 * 32), rows(data.train.y, 0, 20 * 32)};
  FitOptions fit;
  fit.batchSize = 32;
  fit.shuffle = false;
  fit.verbose = 0;

  std::unique_ptr<Model> ref = buildModel("mlp", /*seed=*/5);
  Trainer one(*ref, configFor("mlp", ExecMode::Compiled, 32, false), nullptr);
  History h1 = one.fit(train, fit);

  std::unique_ptr<Model> model = buildModel("mlp", /*seed=*/5 + rank);
  Trainer dp(*model, configFor("mlp", ExecMode::Compiled, 32, true), nullptr);
  History h2 = dp.fit(train, fit);
  EXPECT_NEAR(h1.epochs[0].values["loss"], h2.epochs[0].values["loss"], kTol);
  EXPECT_NEAR(h1.epochs[0].values["accuracy"], h2.epochs[0].values["accuracy"],
              kTol);
  std::vector<NDArray> expected = ref->getWeights(),
                       actual = model->getWeights();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_LE(maxAbsDiff(expected[i], actual[i]), kTol) << i;
}

/// Dense without a bias (a bias before BatchNormalization has a zero
/// gradient, which Adam turns into steps of the learning rate's size driven
/// by rounding alone), BatchNormalization (momentum 0.9: 20 steps move the
/// moving statistics well away from their start), relu, softmax head.
std::unique_ptr<Model> buildBatchNormMlp(bool synchronized) {
  return std::make_unique<Sequential>(
      std::vector<SequentialEntry>{
          Input({28, 28, 1}), Flatten(), Dense(32, "linear", /*useBias=*/false),
          BatchNormalization(-1, 0.9, 1e-3, true, true, "zeros", "ones",
                             "zeros", "ones", synchronized),
          Activation("relu"), Dense(10, "softmax")},
      "bn_mlp", /*seed=*/7);
}

std::vector<double> asDoubles(const NDArray &a) {
  std::vector<double> v(a.numel());
  for (int64_t i = 0; i < a.numel(); ++i)
    v[i] = a.at(i);
  return v;
}

class BatchNormSteps : public ::testing::TestWithParam<ExecMode> {};

/// synchronized=True: the batch statistics are the global batch's (an
/// all-reduce in the forward, differentiated), so N ranks reproduce one
/// process on the whole batch: losses, weights and moving statistics.
TEST_P(BatchNormSteps, SynchronizedMatchesOneProcess) {
  int n = job().size(), rank = job().rank();
  const int64_t global = 32, local = global / n;
  std::unique_ptr<Model> model = buildBatchNormMlp(/*synchronized=*/true);
  JitOptions quiet;
  quiet.log = nullptr;
  Executable one =
      jit(*model, configFor("mlp", GetParam(), global, false), quiet);
  Executable dp = jit(*model, configFor("mlp", GetParam(), local, true), quiet);
  std::vector<NDArray> initial = one.getWeights();
  dp.setWeights(initial);
  double worstLoss = stepBoth(one, dp, global, local);
  EXPECT_LE(worstLoss, kTol);
  std::vector<NDArray> expected = one.getWeights(), actual = dp.getWeights();
  std::vector<std::string> names = one.weightNames();
  // Weights absolutely, as above; the moving statistics relative to their
  // scale: they are means of unnormalized activations (magnitude ~10 here),
  // where float32 sums of 32 rows and of 2 x 16 rows differ in the last bits.
  double worstWeight = 0, worstStat = 0, movedStats = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (names[i].find("moving_") != std::string::npos) {
      double e = maxRelError(expected[i], actual[i]);
      EXPECT_LE(e, kTol) << names[i];
      worstStat = std::max(worstStat, e);
      movedStats = std::max(movedStats, maxAbsDiff(initial[i], expected[i]));
      continue;
    }
    double e = maxAbsDiff(expected[i], actual[i]);
    EXPECT_LE(e, kTol) << names[i];
    worstWeight = std::max(worstWeight, e);
  }
  EXPECT_GT(movedStats, 1e-2);
  if (rank == 0)
    std::printf("[synchronized BatchNormalization %s] %d ranks, %d steps of "
                "%lld: max loss error %.2e, max weight error %.2e, max "
                "moving-statistic error %.2e (relative)\n",
                execModeName(GetParam()), n, kSteps,
                static_cast<long long>(global), worstLoss, worstWeight,
                worstStat);
}

/// The default: each rank normalizes by its own batch's statistics, and the
/// moving statistics become the ranks' mean of their updates, the same on
/// every rank. One step from the same weights: each rank's loss is that of
/// one process on the rank's rows alone, and the moving statistics are the
/// mean of those processes' moving statistics.
TEST_P(BatchNormSteps, PerReplicaStatisticsAveragedMovingStatistics) {
  int rank = job().rank(), n = job().size();
  const int64_t local = 32 / n;
  const FashionMnist &data = fashionMnist();
  std::unique_ptr<Model> model = buildBatchNormMlp(/*synchronized=*/false);
  JitOptions quiet;
  quiet.log = nullptr;
  Executable alone =
      jit(*model, configFor("mlp", GetParam(), local, false), quiet);
  Executable dp = jit(*model, configFor("mlp", GetParam(), local, true), quiet);
  dp.setWeights(alone.getWeights());
  int64_t mine = rank * local;
  NDArray x = rows(data.train.x, mine, mine + local);
  NDArray y = rows(data.train.y, mine, mine + local);
  StepResult ra = alone.step(x, y), rd = dp.step(x, y);
  EXPECT_NEAR(ra.loss, rd.loss, 1e-6);
  std::vector<NDArray> own = alone.getWeights(), shared = dp.getWeights();
  std::vector<std::string> names = dp.weightNames();
  int stats = 0;
  for (size_t i = 0; i < own.size(); ++i) {
    if (names[i].find("moving_") == std::string::npos)
      continue;
    ++stats;
    std::vector<double> expected = job().mean(asDoubles(own[i]));
    double worst = 0, spread = 0;
    for (int64_t j = 0; j < shared[i].numel(); ++j) {
      worst = std::max(worst, std::abs(shared[i].at(j) - expected[j]));
      spread = std::max(spread, std::abs(own[i].at(j) - expected[j]));
    }
    EXPECT_LE(worst, 1e-6) << names[i];
    // The ranks' own statistics differ, so the mean is not one of them.
    EXPECT_GT(job().mean({spread})[0], 1e-4) << names[i];
  }
  EXPECT_EQ(stats, 2);
}

INSTANTIATE_TEST_SUITE_P(Modes, BatchNormSteps,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const ::testing::TestParamInfo<ExecMode> &info) {
                           return std::string(execModeName(info.param));
                         });

class PartialBatch : public ::testing::TestWithParam<ExecMode> {};

/// 101 examples at batch 32, as Keras trains them: three full batches and
/// a partial one of 5, which the ranks split 3 + 2 (as evenly as it goes)
/// with the gradient weighted so that the step is the one process's. Two
/// epochs (shuffled): every epoch's loss and every weight as one process.
TEST_P(PartialBatch, MatchesOneProcess) {
  int rank = job().rank(), n = job().size();
  const FashionMnist &data = fashionMnist();
  Dataset train{rows(data.train.x, 0, 101), rows(data.train.y, 0, 101)};
  FitOptions fit;
  fit.batchSize = 32;
  fit.epochs = 2;
  fit.seed = 3;
  fit.verbose = 0;

  std::unique_ptr<Model> ref = buildModel("mlp", /*seed=*/5);
  Trainer one(*ref, configFor("mlp", GetParam(), 32, false), nullptr);
  History h1 = one.fit(train, fit);

  std::unique_ptr<Model> model = buildModel("mlp", /*seed=*/5);
  Trainer dp(*model, configFor("mlp", GetParam(), 32, true), nullptr);
  History h2 = dp.fit(train, fit);
  ASSERT_EQ(h1.epochs.size(), 2u);
  ASSERT_EQ(h2.epochs.size(), 2u);
  double worstLoss = 0, worstWeight = 0;
  for (size_t e = 0; e < 2; ++e) {
    for (const char *key : {"loss", "accuracy"})
      EXPECT_NEAR(h1.epochs[e].values[key], h2.epochs[e].values[key], kTol)
          << key << " of epoch " << e + 1;
    worstLoss = std::max(worstLoss, std::abs(h1.epochs[e].values["loss"] -
                                             h2.epochs[e].values["loss"]));
  }
  std::vector<NDArray> expected = ref->getWeights();
  std::vector<NDArray> actual = model->getWeights();
  for (size_t i = 0; i < expected.size(); ++i) {
    double e = maxAbsDiff(expected[i], actual[i]);
    EXPECT_LE(e, kTol) << i;
    worstWeight = std::max(worstWeight, e);
  }
  if (rank == 0)
    std::printf("[partial batch %s] %d ranks, 101 examples at batch 32, 2 "
                "epochs: max loss difference %.2e, max weight difference "
                "%.2e\n",
                execModeName(GetParam()), n, worstLoss, worstWeight);
}

INSTANTIATE_TEST_SUITE_P(Modes, PartialBatch,
                         ::testing::Values(ExecMode::Compiled,
                                           ExecMode::Interpreted),
                         [](const ::testing::TestParamInfo<ExecMode> &info) {
                           return std::string(execModeName(info.param));
                         });

TEST(TrainerDataParallel, BatchSmallerThanTheRanksIsAnError) {
  int n = job().size();
  const FashionMnist &data = fashionMnist();
  // The last batch holds n - 1 examples: one rank would have none.
  Dataset train{rows(data.train.x, 0, 32 + n - 1),
                rows(data.train.y, 0, 32 + n - 1)};
  std::unique_ptr<Model> model = buildModel("mlp", 5);
  Trainer dp(*model, configFor("mlp", ExecMode::Compiled, 32, true), nullptr);
  FitOptions fit;
  fit.batchSize = 32;
  fit.verbose = 0;
  try {
    dp.fit(train, fit);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("leaves a rank of the " +
                                         std::to_string(n) + " without any"),
              std::string::npos)
        << e.what();
  }
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  job();
  // Only rank 0 reports; the others' failures still fail the job.
  if (job().rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int status = RUN_ALL_TESTS();
  // A failing rank exits without MPI_Finalize: mpirun then fails the job.
  if (status == 0)
    job().finalize();
  return status;
}
