//===- EagerBenchmark.cpp - Eager mode and the kernel library -------------===//
//
// kcc-bench-eager: is kcc's op-by-op baseline credible? It times
//
//  - per-op dispatch: kcc::ops on tiny tensors (eager) against the bare
//    kernel call on preallocated arrays, so the frontend's share is visible;
//  - whole forward passes run eagerly (model(x) on concrete tensors): the
//    reference MLP at batch 32/64/256 and the CNN at batch 64;
//  - the interpreter running the traced @forward of the same MLP, to show
//    what interpreting the IR costs over eager calls;
//  - oneDNN SGEMM through kernels::matmul, the reference rate for later
//    "fraction of SGEMM" figures (reported as a GFLOP/s counter).
//
// benchmarks/peers/torch_eager.py times the same cases in PyTorch and
// benchmarks/run_eager.sh prints both side by side. Threads come from
// OMP_NUM_THREADS (the kernels and oneDNN share the OpenMP runtime).
//
// Counters: `allocs` (NDArray allocations per iteration), `ops` (kernels
// dispatched per interpreter run), `GFLOPS` (SGEMM rate).
//
//===----------------------------------------------------------------------===//

#include "engine/interpreter/Interpreter.h"
#include "frontend/models/ReferenceModels.h"
#include "kcc/kcc.h"
#include "runtime/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <benchmark/benchmark.h>
#include <omp.h>

#include <string>

using namespace kcc;

namespace {

/// Deterministic values in [0, 1) (an LCG; the values do not matter for
/// timing, only that they are finite and not denormal).
NDArray filled(const Shape &shape, uint64_t seed) {
  NDArray a = NDArray::empty(shape, DType::F32);
  float *p = a.data<float>();
  uint64_t s = seed;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = static_cast<float>(static_cast<double>(s >> 11) * 0x1.0p-53);
  }
  return a;
}

/// Reports NDArray allocations per iteration since `before`.
void reportAllocs(benchmark::State &state, int64_t before) {
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(AllocStats::numAllocs() - before),
                         benchmark::Counter::kAvgIterations);
}

//===----------------------------------------------------------------------===//
// Per-op dispatch
//===----------------------------------------------------------------------===//

/// kcc::ops::add on two f32[4]: shape rule, output allocation, kernel call.
void BM_EagerAdd4(benchmark::State &state) {
  Tensor a = filled({4}, 1), b = filled({4}, 2);
  int64_t before = AllocStats::numAllocs();
  for (auto _ : state) {
    Tensor c = ops::add(a, b);
    benchmark::DoNotOptimize(c.array().rawData());
  }
  reportAllocs(state, before);
}

/// The same add straight into a preallocated output: the kernel library's
/// floor, with no frontend and no allocation.
void BM_KernelAdd4(benchmark::State &state) {
  NDArray a = filled({4}, 1), b = filled({4}, 2);
  NDArray out = NDArray::empty({4}, DType::F32);
  for (auto _ : state) {
    kernels::binary(kernels::BinaryKind::Add, a, b, out);
    benchmark::DoNotOptimize(out.rawData());
    benchmark::ClobberMemory();
  }
}

void BM_EagerRelu32x128(benchmark::State &state) {
  Tensor x = filled({32, 128}, 3);
  int64_t before = AllocStats::numAllocs();
  for (auto _ : state) {
    Tensor y = ops::relu(x);
    benchmark::DoNotOptimize(y.array().rawData());
  }
  reportAllocs(state, before);
}

//===----------------------------------------------------------------------===//
// Forward passes
//===----------------------------------------------------------------------===//

/// model(x) on a concrete batch of 28x28x1 images.
void runEagerForward(benchmark::State &state, Model &model) {
  int64_t batch = state.range(0);
  Tensor x = filled({batch, 28, 28, 1}, 4);
  Tensor warm = model(x); // builds and materializes the weights
  benchmark::DoNotOptimize(warm.array().rawData());
  int64_t before = AllocStats::numAllocs();
  for (auto _ : state) {
    Tensor y = model(x);
    benchmark::DoNotOptimize(y.array().rawData());
  }
  reportAllocs(state, before);
  state.SetItemsProcessed(state.iterations() * batch);
}

void BM_EagerMlp(benchmark::State &state) {
  auto model = models::buildMlp(/*seed=*/1);
  runEagerForward(state, *model);
}

void BM_EagerCnn(benchmark::State &state) {
  auto model = models::buildCnn(/*seed=*/1);
  runEagerForward(state, *model);
}

/// The interpreter on the traced @forward of the MLP, fed the same weights.
/// Tracing happens once, outside the timed loop.
void BM_InterpMlp(benchmark::State &state) {
  int64_t batch = state.range(0);
  auto model = models::buildMlp(/*seed=*/1);
  mlir::MLIRContext ctx;
  TraceOptions opts;
  opts.batch = batch;
  auto module = traceForward(ctx, *model, opts);
  auto func = module->lookupSymbol<mlir::func::FuncOp>("forward");
  std::vector<NDArray> args;
  for (Parameter &p : model->parameters())
    args.push_back(p.value);
  args.push_back(filled({batch, 28, 28, 1}, 4));

  Interpreter interp;
  benchmark::DoNotOptimize(interp.run(func, args)); // warm the GEMM cache
  interp.resetStats();
  int64_t before = AllocStats::numAllocs();
  for (auto _ : state) {
    std::vector<NDArray> out = interp.run(func, args);
    benchmark::DoNotOptimize(out[0].rawData());
  }
  reportAllocs(state, before);
  state.counters["ops"] =
      benchmark::Counter(static_cast<double>(interp.stats().opsDispatched),
                         benchmark::Counter::kAvgIterations);
  state.SetItemsProcessed(state.iterations() * batch);
}

//===----------------------------------------------------------------------===//
// SGEMM reference rate
//===----------------------------------------------------------------------===//

/// C[n,n] = A[n,n] * B[n,n] through kernels::matmul (oneDNN, cached
/// primitive), output preallocated: the GEMM alone.
void BM_Sgemm(benchmark::State &state) {
  int64_t n = state.range(0);
  NDArray a = filled({n, n}, 5), b = filled({n, n}, 6);
  NDArray c = NDArray::empty({n, n}, DType::F32);
  kernels::matmul(a, b, false, false, c); // creates the primitive
  for (auto _ : state) {
    kernels::matmul(a, b, false, false, c);
    benchmark::DoNotOptimize(c.rawData());
    benchmark::ClobberMemory();
  }
  // GFLOP per iteration as an iteration-invariant rate reads in GFLOP/s.
  state.counters["GFLOPS"] = benchmark::Counter(
      2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

} // namespace

// Wall-clock time throughout: kernels run on an OpenMP team, so the main
// thread's CPU time (Google Benchmark's default for rates) would overstate
// every rate.
BENCHMARK(BM_EagerAdd4)->UseRealTime();
BENCHMARK(BM_KernelAdd4)->UseRealTime();
BENCHMARK(BM_EagerRelu32x128)->UseRealTime();
BENCHMARK(BM_EagerMlp)
    ->Arg(32)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InterpMlp)
    ->Arg(32)
    ->Arg(64)
    ->Arg(256)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EagerCnn)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Sgemm)->Arg(512)->Arg(2048)->UseRealTime()->Unit(
    benchmark::kMillisecond);

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  // Record what the run used, so a JSON result says how it was measured.
  benchmark::AddCustomContext("omp_max_threads",
                              std::to_string(omp_get_max_threads()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
