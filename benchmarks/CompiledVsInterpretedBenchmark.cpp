//===- CompiledVsInterpretedBenchmark.cpp - The thesis, measured ----------===//
//
// kcc-bench-step: one whole training step (forward, loss, backward, Adam)
// of the reference models, run through the same Executable compiled and
// interpreted, on real-looking data (deterministic pseudo-random images and
// labels; the values do not change the work done):
//
//   Step/<model>/<batch>/<mode>   the MLP at batch 32, 64, 256, the CNN at 64
//   CompileMlpStep/<batch>        kcc::jit of the MLP with the cache off:
//                                 trace + train pipeline + lowering + JIT
//
// Counters: `kernels` (compiled: library calls + generated loop nests per
// step, counted statically), `ops` (interpreted: kc ops dispatched per
// step), `MB_alloc` (interpreted: MB allocated per step), `MB_peak`
// (interpreted: peak live intermediates), `MB_bound` (compiled: params,
// double-buffered Adam state and outputs held by the Executable),
// `MB_interm` (compiled: static upper bound on intermediate buffers).
//
//===----------------------------------------------------------------------===//

#include "engine/CompileCache.h"
#include "frontend/models/ReferenceModels.h"
#include "frontend/training/Jit.h"

#include <benchmark/benchmark.h>

#include <memory>
#include <string>

using namespace kcc;

namespace {

NDArray images(int64_t batch, uint64_t seed) {
  NDArray a = NDArray::empty({batch, 28, 28, 1}, DType::F32);
  float *p = a.data<float>();
  uint64_t s = seed;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<float>(static_cast<double>(s >> 11) * 0x1.0p-53);
  }
  return a;
}

NDArray labels(int64_t batch) {
  NDArray y = NDArray::empty({batch}, DType::I32);
  for (int64_t i = 0; i < batch; ++i)
    y.set(i, (i * 7) % 10);
  return y;
}

void stepBenchmark(benchmark::State &state, const std::string &name,
                   ExecMode mode) {
  int64_t batch = state.range(0);
  std::unique_ptr<Model> model =
      name == "mlp" ? std::unique_ptr<Model>(models::buildMlp(1))
                    : models::buildCnn(1);
  TrainingConfig config; // adam
  config.batch = batch;
  config.metrics = {"accuracy"};
  config.loss.fromLogits = name != "mlp";
  config.mode = mode;
  JitOptions quiet;
  quiet.log = nullptr;
  Executable exe = jit(*model, config, quiet);
  NDArray x = images(batch, 42), y = labels(batch);
  exe.step(x, y); // warm-up: oneDNN primitives, caches
  ExecStats before = exe.stats();
  for (auto _ : state)
    benchmark::DoNotOptimize(exe.step(x, y).loss);
  ExecStats after = exe.stats();
  double steps = static_cast<double>(after.steps - before.steps);
  state.SetItemsProcessed(state.iterations() * batch);
  if (mode == ExecMode::Compiled) {
    state.counters["kernels"] = static_cast<double>(after.kernelsPerStep());
    state.counters["MB_bound"] = after.boundBytes / 1e6;
    state.counters["MB_interm"] = after.intermediateBytes / 1e6;
  } else {
    state.counters["ops"] =
        (after.opsDispatched - before.opsDispatched) / steps;
    state.counters["MB_alloc"] =
        (after.bytesAllocated - before.bytesAllocated) / 1e6 / steps;
    state.counters["MB_peak"] = after.peakLiveBytes / 1e6;
  }
}

void BM_StepMlpCompiled(benchmark::State &s) {
  stepBenchmark(s, "mlp", ExecMode::Compiled);
}
void BM_StepMlpInterpreted(benchmark::State &s) {
  stepBenchmark(s, "mlp", ExecMode::Interpreted);
}
void BM_StepCnnCompiled(benchmark::State &s) {
  stepBenchmark(s, "cnn", ExecMode::Compiled);
}
void BM_StepCnnInterpreted(benchmark::State &s) {
  stepBenchmark(s, "cnn", ExecMode::Interpreted);
}

BENCHMARK(BM_StepMlpCompiled)
    ->Name("Step/mlp/compiled")
    ->Arg(32)
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StepMlpInterpreted)
    ->Name("Step/mlp/interpreted")
    ->Arg(32)
    ->Arg(64)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StepCnnCompiled)
    ->Name("Step/cnn/compiled")
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StepCnnInterpreted)
    ->Name("Step/cnn/interpreted")
    ->Arg(64)
    ->Unit(benchmark::kMillisecond);

/// Everything kcc::jit does for the MLP, the compile cache bypassed.
void BM_CompileMlpStep(benchmark::State &state) {
  std::unique_ptr<Model> model = models::buildMlp(1);
  TrainingConfig config;
  config.batch = state.range(0);
  config.metrics = {"accuracy"};
  JitOptions quiet;
  quiet.log = nullptr;
  // A real compile every iteration: neither memory nor disk holds it.
  CompileCache::global().setDiskCache(std::nullopt);
  for (auto _ : state) {
    CompileCache::global().clear();
    Executable exe = jit(*model, config, quiet);
    benchmark::DoNotOptimize(&exe);
  }
}
BENCHMARK(BM_CompileMlpStep)
    ->Name("CompileMlpStep")
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

} // namespace

BENCHMARK_MAIN();
