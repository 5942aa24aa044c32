//===- ZooBenchmark.cpp - Every Keras fixture's step, both modes ----------===//
//
// kcc-bench-zoo: kcc's side of benchmarks/run_zoo.sh as a Google Benchmark
// program. One training step of every Keras fixture model under
// tests/fixtures/keras (the zoo's set: not the bad_* error fixtures, not
// the custom-object folders), at batch 32 and 128, compiled and
// interpreted, on seeded synthetic data of the step's own shapes:
//
//   Zoo/<fixture>/<batch>/compiled      Zoo/<fixture>/<batch>/interpreted
//
// A model trains with its archive's compile config; one without trains
// with kcc's default (Adam, sparse categorical crossentropy). Counters:
// `kernels` (compiled: per step) and `ops` (interpreted: kc ops dispatched
// per step). run_zoo.sh adds the Keras 3 backends and the report.
//
//   build/bin/kcc-bench-zoo --benchmark_filter='Zoo/resnet/32/'
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/KerasImporter.h"
#include "frontend/training/Jit.h"
#include "runtime/Error.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace kcc;

namespace {

/// The fixture archives the zoo times, in path order.
std::vector<std::string> zooFixtures() {
  std::vector<std::string> paths;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(KCC_KERAS_FIXTURES, ec),
       end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef path = it->path();
    llvm::StringRef folder =
        llvm::sys::path::filename(llvm::sys::path::parent_path(path));
    if (path.ends_with(".keras") &&
        !llvm::sys::path::filename(path).starts_with("bad_") &&
        folder != "custom" && folder != "custom_loss")
      paths.push_back(path.str());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// Seeded values of `spec`: uniform in [0, 1), or integers in [0, classes).
NDArray syntheticArray(const TensorSpec &spec, int64_t classes,
                       std::mt19937_64 &rng) {
  NDArray a = NDArray::empty(spec.shape, spec.dtype);
  std::uniform_real_distribution<double> real(0.0, 1.0);
  std::uniform_int_distribution<int64_t> label(
      0, std::max<int64_t>(1, classes) - 1);
  bool integer = spec.dtype == DType::I32 || spec.dtype == DType::I64;
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, integer ? static_cast<double>(label(rng)) : real(rng));
  return a;
}

void zooStep(benchmark::State &state, const std::string &path, int64_t batch,
             ExecMode mode) {
  try {
    keras::ImportedModel imported = keras::importFile(path, /*seed=*/1);
    TrainingConfig config = imported.training.value_or(TrainingConfig());
    config.batch = batch;
    config.mode = mode;
    JitOptions quiet;
    quiet.log = nullptr;
    Executable exe = jit(*imported.model, config, quiet);
    // Integer inputs are token ids (kept under the smallest vocabulary
    // worth assuming, 2); integer targets are labels of the output's width.
    std::mt19937_64 rng(42);
    std::vector<NDArray> xs, ys;
    for (const TensorSpec &spec : exe.inputSpecs())
      xs.push_back(syntheticArray(spec, 2, rng));
    std::vector<Shape> outputs = imported.model->outputShapes();
    std::vector<TensorSpec> targets = exe.targetSpecs();
    for (size_t k = 0; k < targets.size(); ++k)
      ys.push_back(syntheticArray(
          targets[k], k < outputs.size() ? outputs[k].back() : 2, rng));
    exe.step(xs, ys); // warm-up: oneDNN primitives, caches
    ExecStats before = exe.stats();
    for (auto _ : state)
      benchmark::DoNotOptimize(exe.step(xs, ys).loss);
    ExecStats after = exe.stats();
    double steps = static_cast<double>(after.steps - before.steps);
    state.SetItemsProcessed(state.iterations() * batch);
    if (mode == ExecMode::Compiled)
      state.counters["kernels"] = static_cast<double>(after.kernelsPerStep());
    else
      state.counters["ops"] =
          (after.opsDispatched - before.opsDispatched) / steps;
  } catch (const Error &e) {
    state.SkipWithError(e.what());
  }
}

} // namespace

int main(int argc, char **argv) {
  for (const std::string &path : zooFixtures()) {
    std::string name = llvm::sys::path::stem(path).str();
    for (int64_t batch : {32, 128})
      for (auto [mode, label] : {std::pair{ExecMode::Compiled, "compiled"},
                                 {ExecMode::Interpreted, "interpreted"}})
        benchmark::RegisterBenchmark(
            ("Zoo/" + name + "/" + std::to_string(batch) + "/" + label).c_str(),
            [path, batch, mode = mode](benchmark::State &state) {
              zooStep(state, path, batch, mode);
            })
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
