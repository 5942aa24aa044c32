//===- CudaRuntimeTest.cpp - The GPU runtime against the CPU interpreter --===//
//
// On a machine with a CUDA device: the reference train steps run compiled on
// the GPU (plain runs and CUDA-graph replays with device-resident state) and
// op by op on the GPU (eager), against the CPU interpreter, three steps
// each. FP32 everywhere (cuBLASLt COMPUTE_32F, no TF32). Tolerances: loss
// and accuracy 1e-4 relative; parameters and optimizer state 1e-4 relative
// or 2.5e-3 absolute — adam moves every weight by about lr = 1e-3 whatever
// the gradient's size, so a gradient that is rounding noise on one side may
// move its weight the other way.
//
// Without a device every GPU test skips with "no CUDA device found", and
// the no-device path itself is checked: a clean kcc::Error, no crash.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"
#include "engine/cuda/CudaEager.h"
#include "engine/cuda/CudaExecutable.h"
#include "runtime/Error.h"
#include "runtime/cuda/CudaApi.h"
#include "tests/unit/cuda/CudaTestUtil.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace kcc;
using namespace kcc::testing;

namespace {

#define SKIP_WITHOUT_DEVICE()                                                  \
  do {                                                                         \
    std::string why;                                                           \
    if (!cuda::deviceAvailable(&why))                                          \
      GTEST_SKIP() << why;                                                     \
  } while (0)

TEST(CudaDevice, MissingDeviceIsACleanError) {
  std::string why;
  if (cuda::deviceAvailable(&why)) {
    std::cout << "[ cuda     ] device: " << cuda::deviceName() << "\n";
    return;
  }
  EXPECT_EQ(why.rfind("no CUDA device found", 0), 0u) << why;
  try {
    cuda::CudaExecutable::load(cuda::CudaProgram());
    ADD_FAILURE() << "load without a device must throw";
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("no CUDA device found", 0), 0u);
  }
  EXPECT_THROW(cuda::CudaEager eager, Error);
}

void expectClose(const NDArray &expected, const NDArray &actual, double rtol,
                 double atol, const std::string &what) {
  ASSERT_EQ(expected.shape(), actual.shape()) << what;
  ASSERT_EQ(expected.dtype(), actual.dtype()) << what;
  for (int64_t i = 0; i < expected.numel(); ++i) {
    double e = expected.at(i), a = actual.at(i);
    ASSERT_LE(std::abs(e - a), std::max(atol, rtol * std::abs(e)))
        << what << " element " << i << ": CPU interpreter " << e << ", GPU "
        << a;
  }
}

/// Result r of a train step compared with its tolerance.
void expectStepClose(const TrainStepLayout &layout,
                     const std::vector<NDArray> &expected,
                     const std::vector<NDArray> &actual,
                     const std::string &what) {
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t r = 0; r < expected.size(); ++r) {
    bool lossOrMetric = r < layout.firstParamResult();
    expectClose(expected[r], actual[r], 1e-4, lossOrMetric ? 1e-4 : 2.5e-3,
                what + " result " + std::to_string(r));
  }
}

void carry(const TrainStepLayout &layout, std::vector<NDArray> &args,
           const std::vector<NDArray> &results) {
  unsigned n = layout.numParams + layout.numOptimizerState;
  for (unsigned i = 0; i < n; ++i)
    args[i] = results[layout.firstParamResult() + i];
  args[layout.iterationsArg()] = results[layout.iterationsResult()];
}

class GpuTrainStep : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuTrainStep, CompiledGraphAndEagerMatchTheInterpreter) {
  SKIP_WITHOUT_DEVICE();
  mlir::MLIRContext ctx;
  auto model = referenceModel(GetParam());
  auto module = buildTrainStep(ctx, *model, GetParam(), /*batch=*/32);
  ASSERT_TRUE(module);
  auto step = module->lookupSymbol<mlir::func::FuncOp>("train_step");
  std::optional<TrainStepLayout> layout = getTrainStepLayout(step);
  ASSERT_TRUE(layout);
  auto program = compileForCuda(*module, "train_step", CudaOptions());
  ASSERT_TRUE(mlir::succeeded(program));

  std::vector<NDArray> args = trainStepArgs(step, *layout, *model);
  try {
    auto exe = cuda::CudaExecutable::load(*program);
    auto resident = cuda::CudaExecutable::load(*program);
    cuda::CudaEager eager;
    Interpreter interpreter;

    // Resident state: params, optimizer state and the counter carried on
    // the device; x, y and lr uploaded each step; only the loss fetched.
    std::vector<std::pair<unsigned, unsigned>> carried;
    unsigned n = layout->numParams + layout->numOptimizerState;
    for (unsigned i = 0; i < n; ++i)
      carried.push_back({layout->firstParamResult() + i, i});
    carried.push_back({layout->iterationsResult(), layout->iterationsArg()});
    resident->setCarry(carried);
    for (unsigned i = 0; i < layout->firstInputArg(); ++i)
      resident->upload(i, args[i]);

    std::vector<NDArray> cpuArgs = args, gpuArgs = args, eagerArgs = args;
    for (int s = 0; s < 3; ++s) {
      std::string tag = GetParam() + " step " + std::to_string(s);
      std::vector<NDArray> expected = interpreter.run(step, cpuArgs);
      std::vector<NDArray> compiled = exe->run(gpuArgs);
      expectStepClose(*layout, expected, compiled, tag + " compiled");
      std::vector<NDArray> byOp = eager.run(step, eagerArgs);
      expectStepClose(*layout, expected, byOp, tag + " eager");
      std::map<unsigned, NDArray> perStep;
      for (unsigned i = layout->learningRateArg(); i < args.size(); ++i)
        perStep[i] = args[i];
      std::vector<NDArray> loss =
          resident->step(perStep, {layout->lossResult()});
      expectClose(expected[layout->lossResult()], loss[0], 1e-4, 1e-4,
                  tag + " graph loss");
      carry(*layout, cpuArgs, expected);
      carry(*layout, gpuArgs, compiled);
      carry(*layout, eagerArgs, byOp);
    }
    // The resident parameters followed the same trajectory.
    for (unsigned i = 0; i < layout->numParams; ++i)
      expectClose(cpuArgs[i], resident->download(i), 1e-4, 2.5e-3,
                  "resident param " + std::to_string(i));
    EXPECT_EQ(resident->counts().graphReplays, 3);
    EXPECT_GT(eager.counts().opsDispatched, exe->counts().kernelLaunches)
        << "eager mode dispatches more often than the fused program";
  } catch (const Error &e) {
    FAIL() << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(ReferenceModels, GpuTrainStep,
                         ::testing::Values("mlp", "cnn", "residual"),
                         [](const auto &info) { return info.param; });

} // namespace
