//===- DataParallelTest.cpp - N ranks train as one process does -----------===//
//
// Run by ctest under `mpirun -np 2`. Every rank also trains the single-
// process reference itself (the step on the whole global batch), so each
// check compares, on every rank, the data-parallel run against the one
// process it must reproduce: for the MLP and the CNN, compiled and
// interpreted, 20 Adam steps on the same global batches agree on the loss
// (the ranks' mean, relative) and on every weight within 1e-5 (absolute); summation order is the
// only difference. Through the Trainer, ranks that start from different
// weights end with rank 0's training, and a batch that does not split over
// the ranks is an error.
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
    worst = std::max(worst, std::abs(e - a) / std::max({std::abs(e), scale,
                                                         1e-30}));
  }
  return worst;
}

double maxAbsDiff(const NDArray &a, const NDArray &b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(a.at(i) - b.at(i)));
  return worst;
}

TrainingConfig configFor(const std::string &model, ExecMode mode,
                         int64_t batch, bool dataParallel) {
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
  const FashionMnist &data = fashionMnist();
  std::unique_ptr<Model> model = buildModel(c.model, /*seed=*/5);
  JitOptions quiet;
  quiet.log = nullptr;
  Executable one = jit(*model, configFor(c.model, c.mode, global, false), quiet);
  Executable dp = jit(*model, configFor(c.model, c.mode, local, true), quiet);
  EXPECT_NE(dp.moduleText().find("kc.all_reduce"), std::string::npos);
  EXPECT_EQ(one.moduleText().find("kc.all_reduce"), std::string::npos);
  std::vector<NDArray> initial = one.getWeights();
  dp.setWeights(initial);

  double worstLoss = 0;
  for (int s = 0; s < kSteps; ++s) {
    int64_t begin = s * global;
    StepResult ref = one.step(rows(data.train.x, begin, begin + global),
                              rows(data.train.y, begin, begin + global));
    int64_t mine = begin + rank * local;
    StepResult r = dp.step(rows(data.train.x, mine, mine + local),
                           rows(data.train.y, mine, mine + local));
    double loss = job().mean({r.loss})[0];
    worstLoss = std::max(worstLoss, std::abs(loss - ref.loss) /
                                        std::max(1.0, std::abs(ref.loss)));
  }
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

INSTANTIATE_TEST_SUITE_P(
    Models, TwentySteps,
    ::testing::Values(Case{"mlp", ExecMode::Compiled},
                      Case{"mlp", ExecMode::Interpreted},
                      Case{"cnn", ExecMode::Compiled},
                      Case{"cnn", ExecMode::Interpreted}),
    [](const ::testing::TestParamInfo<Case> &info) {
      return info.param.model + "_" + execModeName(info.param.mode);
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
  std::vector<NDArray> expected = ref->getWeights(), actual = model->getWeights();
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_LE(maxAbsDiff(expected[i], actual[i]), kTol) << i;
}

TEST(TrainerDataParallel, UnevenBatchIsAnError) {
  int n = job().size();
  const FashionMnist &data = fashionMnist();
  Dataset train{rows(data.train.x, 0, 64), rows(data.train.y, 0, 64)};
  std::unique_ptr<Model> model = buildModel("mlp", 5);
  Trainer dp(*model, configFor("mlp", ExecMode::Compiled, 32, true), nullptr);
  FitOptions fit;
  fit.batchSize = 2 * n + 1;
  fit.verbose = 0;
  try {
    dp.fit(train, fit);
    FAIL() << "expected an error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find("does not split evenly over " +
                                         std::to_string(n) + " ranks"),
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
