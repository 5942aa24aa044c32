//===- ExecutableTest.cpp - The Executable API and the compile cache ------===//
//
// What a user of kcc::jit relies on beyond the numbers: one compile per
// model and shapes (reported, then cached), weights by name, predict on any
// number of rows, errors instead of crashes, stats in both modes, and a
// compiled step loop that allocates no NDArray.
//
//===----------------------------------------------------------------------===//

#include "tests/e2e/E2ETestUtil.h"

#include "engine/CompileCache.h"
#include "frontend/Trace.h"
#include "frontend/training/Jit.h"
#include "runtime/Error.h"

#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;

namespace {

TrainingConfig mlpConfig(int64_t batch, ExecMode mode) {
  TrainingConfig o; // adam
  o.batch = batch;
  o.metrics = {"accuracy"};
  o.mode = mode;
  return o;
}

/// Compiles reported to `log` (null: silent).
JitOptions logTo(llvm::raw_ostream *log = nullptr) {
  JitOptions o;
  o.log = log;
  return o;
}

/// The first `n` training examples.
void firstBatch(int64_t n, NDArray &x, NDArray &y) {
  BatchIterator it(e2e::fashionMnist().train, n, /*shuffle=*/false, 0);
  it.startEpoch(0);
  it.batch(0, x, y);
}

TEST(CompileCache, SameModelAndShapesCompileOnce) {
  CompileCache &cache = CompileCache::global();
  cache.clear();
  // Counts compiles in this process: none may come from an earlier run's
  // disk cache (ctest turns it off; a binary run by hand may not).
  cache.setDiskCache(std::nullopt);
  std::string log;
  llvm::raw_string_ostream os(log);
  // Two models, same architecture, different initial weights: same IR.
  std::unique_ptr<Model> a = e2e::buildModel("mlp", 1),
                         b = e2e::buildModel("mlp", 2);
  Executable first = jit(*a, mlpConfig(24, ExecMode::Compiled), logTo(&os));
  EXPECT_EQ(cache.compiles(), 1);
  EXPECT_EQ(cache.hits(), 0);
  EXPECT_FALSE(first.stats().fromCache);
  EXPECT_GT(first.stats().compileSeconds, 0);
  Executable second = jit(*b, mlpConfig(24, ExecMode::Compiled), logTo(&os));
  EXPECT_EQ(cache.compiles(), 1);
  EXPECT_EQ(cache.hits(), 1);
  EXPECT_TRUE(second.stats().fromCache);
  // The compile was reported once, with its batch.
  os.flush();
  EXPECT_NE(log.find("kcc: compiled train_step for batch 24 in "),
            std::string::npos)
      << log;
  EXPECT_EQ(log.find("kcc: compiled", log.find("kcc: compiled") + 1),
            std::string::npos)
      << log;
  // The shared function still runs each Executable on its own weights.
  NDArray x, y;
  firstBatch(24, x, y);
  EXPECT_NE(first.step(x, y).loss, second.step(x, y).loss);

  // Another batch or another optimizer is another function.
  Executable third = jit(*a, mlpConfig(16, ExecMode::Compiled), logTo(&os));
  EXPECT_EQ(cache.compiles(), 2);
  TrainingConfig sgd = mlpConfig(24, ExecMode::Compiled);
  sgd.optimizer.kind = OptimizerKind::SGD;
  Executable fourth = jit(*a, sgd, logTo(&os));
  EXPECT_EQ(cache.compiles(), 3);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(Executable, WeightsByNameRoundTrip) {
  std::unique_ptr<Model> model = e2e::buildModel("mlp", 1);
  Executable exe = jit(*model, mlpConfig(8, ExecMode::Compiled), logTo());
  ASSERT_EQ(exe.weightNames().size(), 6u);
  EXPECT_EQ(exe.weightNames()[0], "dense/kernel");
  std::vector<NDArray> initial = model->getWeights();
  NDArray k = exe.getWeight("dense/kernel");
  ASSERT_EQ(k.shape(), (Shape{784, 128}));
  EXPECT_EQ(k.at(5), initial[0].at(5));

  NDArray bias = NDArray::zeros({128}, DType::F32);
  bias.set(3, 0.25);
  exe.setWeight("dense/bias", bias);
  EXPECT_EQ(exe.getWeight("dense/bias").at(3), 0.25);
  // A step runs on the weights set, then the state moves on.
  NDArray x, y;
  firstBatch(8, x, y);
  exe.step(x, y);
  EXPECT_NE(exe.getWeight("dense/bias").at(3), 0.25);
  EXPECT_EQ(exe.iterations(), 1);

  EXPECT_THROW(exe.getWeight("dense/kernal"), Error);
  EXPECT_THROW(exe.setWeight("dense/bias", NDArray::zeros({64}, DType::F32)),
               Error);
  EXPECT_THROW(exe.setWeights({bias}), Error);
}

TEST(Executable, WrongBatchThrowsInBothModes) {
  std::unique_ptr<Model> model = e2e::buildModel("mlp", 1);
  for (ExecMode mode : {ExecMode::Compiled, ExecMode::Interpreted}) {
    Executable exe = jit(*model, mlpConfig(8, mode), logTo());
    NDArray x, y;
    firstBatch(16, x, y);
    try {
      exe.step(x, y);
      ADD_FAILURE() << execModeName(mode) << ": no error for batch 16";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find("[8, 28, 28, 1]"), std::string::npos)
          << e.what();
    }
  }
}

TEST(Executable, InvalidConfigsAreErrors) {
  std::unique_ptr<Model> model = e2e::buildModel("mlp", 1);
  TrainingConfig o = mlpConfig(8, ExecMode::Compiled);
  o.metrics = {"auc"};
  EXPECT_THROW(jit(*model, o, logTo()), Error);
  o = mlpConfig(8, ExecMode::Compiled);
  o.batch = 0;
  EXPECT_THROW(jit(*model, o, logTo()), Error);
}

TEST(Executable, PredictPadsTheLastBatchAndAgrees) {
  std::unique_ptr<Model> model = e2e::buildModel("residual", 4);
  TrainingConfig o = mlpConfig(16, ExecMode::Compiled);
  o.loss.fromLogits = true;
  Executable compiled = jit(*model, o, logTo());
  o.mode = ExecMode::Interpreted;
  Executable interpreted = jit(*model, o, logTo());
  NDArray x, y;
  firstBatch(37, x, y); // two full batches of 16 and 5 padded rows
  NDArray pc = compiled.predict(x), pi = interpreted.predict(x);
  ASSERT_EQ(pc.shape(), (Shape{37, 10}));
  ASSERT_EQ(pi.shape(), (Shape{37, 10}));
  for (int64_t i = 0; i < pc.numel(); ++i)
    EXPECT_NEAR(pc.at(i), pi.at(i), 1e-5 * std::max(1.0, std::abs(pi.at(i))))
        << "element " << i;
  // Row 36 alone (in a padded batch) equals row 36 in a batch of its own.
  NDArray row = NDArray::empty({1, 28, 28, 1}, DType::F32);
  for (int64_t k = 0; k < 784; ++k)
    row.set(k, x.at(36 * 784 + k));
  NDArray p1 = interpreted.predict(row);
  for (int64_t j = 0; j < 10; ++j)
    EXPECT_FLOAT_EQ(p1.at(j), pi.at(36 * 10 + j));
}

TEST(Executable, StatsInBothModes) {
  std::unique_ptr<Model> model = e2e::buildModel("mlp", 1);
  NDArray x, y;
  firstBatch(32, x, y);

  Executable compiled = jit(*model, mlpConfig(32, ExecMode::Compiled), logTo());
  compiled.step(x, y);
  ExecStats cs = compiled.stats();
  EXPECT_EQ(cs.mode, ExecMode::Compiled);
  EXPECT_EQ(cs.steps, 1);
  // Forward + backward of three Dense layers: 3 forward GEMMs, 3 weight
  // gradients and 2 input gradients (the first layer's is not needed).
  EXPECT_EQ(cs.libraryCallsPerStep, 8);
  EXPECT_GT(cs.loopNestsPerStep, 0);
  EXPECT_EQ(cs.opsDispatched, 0);
  // Params and 2 Adam slots each, updated in place (kc-mark-in-place
  // proves every update safe): one set of 3 * 109386 floats, not two.
  EXPECT_GE(cs.boundBytes, 3 * 109386 * 4);
  EXPECT_LT(cs.boundBytes, 6 * 109386 * 4);
  EXPECT_GT(cs.intermediateBytes, 0);

  Executable interpreted =
      jit(*model, mlpConfig(32, ExecMode::Interpreted), logTo());
  interpreted.step(x, y);
  ExecStats is = interpreted.stats();
  EXPECT_EQ(is.mode, ExecMode::Interpreted);
  EXPECT_GT(is.opsDispatched, cs.kernelsPerStep());
  EXPECT_GT(is.bytesAllocated, 0);
  EXPECT_GT(is.peakLiveBytes, 0);
  EXPECT_LE(is.peakLiveBytes, is.bytesAllocated);
}

TEST(Executable, ModuleWithoutFunctionsIsAnError) {
  auto ctx = std::make_shared<mlir::MLIRContext>();
  registerFrontendDialects(*ctx);
  mlir::OwningOpRef<mlir::ModuleOp> empty =
      mlir::ModuleOp::create(mlir::UnknownLoc::get(ctx.get()));
  EXPECT_THROW(Executable(ctx, std::move(empty), {}), Error);
}

} // namespace
