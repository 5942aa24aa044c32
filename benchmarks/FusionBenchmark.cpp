//===- FusionBenchmark.cpp - Compiled vs interpreted train steps ----------===//
//
// kcc-bench-fusion: one Adam @train_step per model, run by the interpreter
// (op by op, one kernel and one allocation per op) and by the compiled code
// (kc-cpu-pipeline + ORC JIT), on the same arguments. The targets:
//
//   mlp_small   32-64-64-10, batch 16     dispatch-bound      compiled >= 5x
//   mlp         784-128-64-10, batch 64                       compiled >= 2x
//   cnn         the reference CNN, batch 64                   compiled >= 1.3x
//   mlp_gemm    4096-4096-4096-10, batch 512   GEMM-bound     compiled >= 1.05x
//                                       and >= 80% of oneDNN's SGEMM rate
//
// Compare the compiled and interpreted lines of one run (the machine is
// shared: a ratio across runs means little); --benchmark_repetitions=N with
// --benchmark_report_aggregates_only=true gives medians.
//
// Also the peers' cases (benchmarks/peers/models.py): mlp at batch 32 and
// 256, cnn at 32 and 128.
//
// Counters: `steps/s`, `kernels` (compiled: library calls + loop nests;
// interpreted: ops dispatched), `arena_B`, `lower_bound_B`, `unshared_B`
// (the memory plan), `peak_B` (interpreted: AllocStats peak over a step,
// arguments, results and the interpreter's pooled buffers included;
// compiled: arguments + the results not updated in place + arena),
// `GFLOPS` (the step's GEMM and convolution FLOPs, forward and backward, per
// second) and `sgemm_frac` (GFLOPS over oneDNN's SGEMM rate on mlp_gemm's
// shapes, measured once at the start of the same run).
//
// `kcc-bench-fusion --peak-rss=<model>:<batch>:<compiled|interpreted>`
// measures instead, in this process only, the resident memory of the step:
// the peak RSS over 5 steps (VmHWM, reset after setup) minus the RSS before
// them, plus the arguments' bytes, which are resident throughout. Setup
// (tracing, compiling, the JIT) is excluded: it is a one-off.
// benchmarks/peak_rss.sh runs both modes in separate processes.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/memory/MemoryPlan.h"
#include "codegen/pipeline/KernelCount.h"
#include "engine/CompiledFunction.h"
#include "engine/interpreter/Interpreter.h"
#include "frontend/models/ReferenceModels.h"
#include "ir/KcDialect.h"
#include "kcc/kcc.h"
#include "passes/TrainStep.h"
#include "runtime/kernels/Kernels.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>

using namespace kcc;

namespace {

/// Deterministic values in [-scale, scale).
NDArray filled(const Shape &shape, DType dt, uint64_t seed, double scale) {
  NDArray a = NDArray::empty(shape, dt);
  uint64_t s = seed;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a.set(i, scale * (2.0 * static_cast<double>(s >> 11) * 0x1.0p-53 - 1.0));
  }
  return a;
}

int64_t numel(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getNumElements();
}
int64_t dim(mlir::Value v, unsigned i) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getDimSize(i);
}

/// The GEMM and convolution FLOPs of `func` (2 per multiply-add), the
/// backward products included: what GFLOP/s figures divide.
double stepFlops(mlir::func::FuncOp func) {
  double flops = 0;
  func.walk([&](mlir::Operation *op) {
    if (auto mm = mlir::dyn_cast<kc::MatmulOp>(op)) {
      int64_t k = dim(mm.getLhs(), mm.getTransposeLhs() ? 0 : 1);
      flops += 2.0 * numel(mm.getResult()) * k;
    } else if (auto c = mlir::dyn_cast<kc::Conv2DOp>(op)) {
      mlir::Value w = c.getFilter();
      flops += 2.0 * numel(c.getResult()) * dim(w, 0) * dim(w, 1) * dim(w, 2);
    } else if (auto c = mlir::dyn_cast<kc::Conv2DBackpropInputOp>(op)) {
      mlir::Value w = c.getFilter();
      flops +=
          2.0 * numel(c.getGradOutput()) * dim(w, 0) * dim(w, 1) * dim(w, 2);
    } else if (auto c = mlir::dyn_cast<kc::Conv2DBackpropFilterOp>(op)) {
      mlir::Value w = c.getResult();
      flops +=
          2.0 * numel(c.getGradOutput()) * dim(w, 0) * dim(w, 1) * dim(w, 2);
    }
  });
  return flops;
}

/// oneDNN's SGEMM rate (GFLOP/s) on mlp_gemm's shapes, measured once per
/// run: the reference `sgemm_frac` divides by.
double sgemmRate = 0;

std::unique_ptr<Model> buildModel(const std::string &name) {
  if (name == "mlp")
    return models::buildMlp(1);
  if (name == "cnn")
    return models::buildCnn(1);
  if (name == "mlp_small")
    return std::make_unique<Sequential>(
        std::vector<SequentialEntry>{Input({32}), Dense(64, "relu"),
                                     Dense(64, "relu"), Dense(10, "softmax")},
        "mlp_small", 1);
  // mlp_gemm
  return std::make_unique<Sequential>(
      std::vector<SequentialEntry>{Input({4096}), Dense(4096, "relu"),
                                   Dense(4096, "relu"), Dense(10, "softmax")},
      "mlp_gemm", 1);
}

/// A traced, built @train_step and arguments a runtime would pass.
struct Step {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp func;
  std::vector<NDArray> args;
  int64_t argBytes = 0;

  Step(const std::string &model, int64_t batch) {
    auto m = buildModel(model);
    TraceOptions opts;
    opts.batch = batch;
    module = traceForward(ctx, *m, opts);
    mlir::PassManager pm(&ctx);
    buildTrainPipeline(pm, TrainingConfig()); // adam
    if (mlir::failed(pm.run(*module)))
      throw Error("train pipeline failed");
    func = module->lookupSymbol<mlir::func::FuncOp>("train_step");
    auto layout = getTrainStepLayout(func);
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto t =
          mlir::cast<mlir::RankedTensorType>(func.getArgument(i).getType());
      Shape shape(t.getShape().begin(), t.getShape().end());
      DType dt = dtypeOf(t.getElementType());
      if (i < layout->numParams || i == layout->firstInputArg())
        args.push_back(filled(shape, dt, i + 1, 0.05));
      else if (i == layout->iterationsArg())
        args.push_back(NDArray::scalar(0, DType::I64));
      else if (i == layout->learningRateArg())
        args.push_back(NDArray::scalar(0.001, dt));
      else if (i == layout->targetArg()) {
        NDArray y = NDArray::empty(shape, dt);
        for (int64_t k = 0; k < y.numel(); ++k)
          y.set(k, k % 10);
        args.push_back(y);
      } else {
        args.push_back(NDArray::zeros(shape, dt));
      }
      argBytes += args.back().bytes();
    }
  }
};

/// steps/s, GFLOPS and sgemm_frac of a benchmark whose iteration is a step.
void addRateCounters(benchmark::State &state, double flops) {
  state.counters["steps/s"] =
      benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOPS"] = benchmark::Counter(
      flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  // A rate divided by a constant stays a rate: the fraction of SGEMM.
  if (sgemmRate > 0)
    state.counters["sgemm_frac"] =
        benchmark::Counter(flops * 1e-9 / sgemmRate,
                           benchmark::Counter::kIsIterationInvariantRate);
}

/// The result buffers of a step, as the Executable binds them: a result
/// proven safe in place is its argument's array, the others get arrays of
/// their own, whose bytes are added to `ownBytes`.
std::vector<NDArray> resultBuffers(const CompiledFunction &fn,
                                   const std::vector<NDArray> &args,
                                   int64_t &ownBytes) {
  std::vector<NDArray> outs(fn.resultSpecs().size());
  for (auto [result, arg] : fn.inPlaceResults())
    outs[result] = args[arg];
  for (size_t r = 0; r < outs.size(); ++r)
    if (!outs[r].defined()) {
      const TensorSpec &s = fn.resultSpecs()[r];
      outs[r] = NDArray::empty(s.shape, s.dtype);
      ownBytes += outs[r].bytes();
    }
  return outs;
}

void BM_Interpreted(benchmark::State &state, const std::string &model) {
  Step step(model, state.range(0));
  Interpreter interp;
  benchmark::DoNotOptimize(interp.run(step.func, step.args)); // warm caches
  interp.resetStats();
  AllocStats::resetPeak();
  int64_t live = AllocStats::liveBytes();
  for (auto _ : state) {
    std::vector<NDArray> out = interp.run(step.func, step.args);
    benchmark::DoNotOptimize(out[0].rawData());
  }
  addRateCounters(state, stepFlops(step.func));
  state.counters["kernels"] =
      benchmark::Counter(static_cast<double>(interp.stats().opsDispatched),
                         benchmark::Counter::kAvgIterations);
  // Arguments are live throughout; the step adds intermediates and results.
  state.counters["peak_B"] =
      static_cast<double>(AllocStats::peakBytes() - live + step.argBytes);
}

/// `kernelFusion` false: elementwise fusion only, no epilogues in the
/// library calls and no loop fusion groups (what kc-fuse-epilogues and
/// kc-fuse-loops buy, measured in the same run).
void BM_Compiled(benchmark::State &state, const std::string &model,
                 bool kernelFusion) {
  Step step(model, state.range(0));
  CpuOptions cpu;
  cpu.pipeline->fuseEpilogues = kernelFusion;
  cpu.pipeline->fuseLoops = kernelFusion;
  CompiledFunction fn =
      CompiledFunction::compile(*step.module, "train_step", cpu);
  int64_t outBytes = 0;
  std::vector<NDArray> outs = resultBuffers(fn, step.args, outBytes);
  fn.runInto(step.args, outs); // warm the primitive caches
  for (auto _ : state) {
    fn.runInto(step.args, outs);
    benchmark::DoNotOptimize(outs[0].rawData());
  }
  addRateCounters(state, stepFlops(step.func));
  // What the pipeline recorded in the lowering that was compiled.
  const KernelCount &kernels = fn.kernelCount();
  MemoryPlanReport plan = fn.memoryPlan().value_or(MemoryPlanReport());
  state.counters["kernels"] = static_cast<double>(kernels.total());
  state.counters["library_calls"] = static_cast<double>(kernels.libraryCalls);
  state.counters["arena_B"] = static_cast<double>(plan.arenaBytes);
  state.counters["lower_bound_B"] = static_cast<double>(plan.lowerBoundBytes);
  state.counters["unshared_B"] = static_cast<double>(plan.sumBytes);
  state.counters["peak_B"] =
      static_cast<double>(step.argBytes + outBytes + plan.arenaBytes);
}

/// The GEMMs of mlp_gemm's step through kernels::matmul (oneDNN), outputs
/// preallocated: the rate the compiled step's GEMMs could reach at best.
/// Forward x·W1, h·W2; backward dY·W2ᵀ, hᵀ·dY for both big layers.
struct SgemmOfMlpGemm {
  int64_t b, n = 4096;
  NDArray x, w, y, dw;
  explicit SgemmOfMlpGemm(int64_t batch)
      : b(batch), x(filled({b, n}, DType::F32, 1, 1)),
        w(filled({n, n}, DType::F32, 2, 1)),
        y(NDArray::empty({b, n}, DType::F32)),
        dw(NDArray::empty({n, n}, DType::F32)) {}
  double flops() const { return 3 * 2.0 * b * n * n; }
  void once() {
    kernels::matmul(x, w, false, false, y); // forward
    kernels::matmul(y, w, false, true, x);  // grad wrt input
    kernels::matmul(x, y, true, false, dw); // grad wrt weight
  }
};

/// The median of 5 timed calls after a warm-up, in GFLOP/s.
double measureSgemmRate() {
  SgemmOfMlpGemm g(512);
  g.once();
  std::vector<double> rates;
  for (int i = 0; i < 5; ++i) {
    auto start = std::chrono::steady_clock::now();
    g.once();
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    rates.push_back(g.flops() * 1e-9 / s);
  }
  std::sort(rates.begin(), rates.end());
  return rates[2];
}

void BM_SgemmOfMlpGemm(benchmark::State &state) {
  int64_t b = state.range(0), n = 4096;
  NDArray x = filled({b, n}, DType::F32, 1, 1),
          w = filled({n, n}, DType::F32, 2, 1);
  NDArray y = NDArray::empty({b, n}, DType::F32);
  NDArray dw = NDArray::empty({n, n}, DType::F32);
  auto once = [&] {
    kernels::matmul(x, w, false, false, y); // forward
    kernels::matmul(y, w, false, true, x);  // grad wrt input
    kernels::matmul(x, y, true, false, dw); // grad wrt weight
  };
  once();
  for (auto _ : state) {
    once();
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(3 * 2.0 * b * n * n * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

void registerAll() {
  struct Case {
    std::string model;
    int64_t batch;
  };
  for (const Case &c :
       {Case{"mlp_small", 16}, Case{"mlp", 32}, Case{"mlp", 64},
        Case{"mlp", 256}, Case{"cnn", 32}, Case{"cnn", 64}, Case{"cnn", 128},
        Case{"cnn", 256}, Case{"mlp_gemm", 512}}) {
    bool big = c.model == "mlp_gemm" || (c.model == "cnn" && c.batch >= 128);
    std::vector<benchmark::internal::Benchmark *> runs = {
        benchmark::RegisterBenchmark(("Interpreted/" + c.model).c_str(),
                                     BM_Interpreted, c.model),
        benchmark::RegisterBenchmark(("Compiled/" + c.model).c_str(),
                                     BM_Compiled, c.model, true)};
    if (!big)
      runs.push_back(benchmark::RegisterBenchmark(
          ("CompiledNoKernelFusion/" + c.model).c_str(), BM_Compiled, c.model,
          false));
    for (auto *b : runs) {
      b->Arg(c.batch)->UseRealTime()->Unit(benchmark::kMicrosecond);
      if (big)
        b->MinTime(2.0);
    }
  }
  benchmark::RegisterBenchmark("SgemmOfMlpGemm", BM_SgemmOfMlpGemm)
      ->Arg(512)
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

} // namespace

/// A field of /proc/self/status in bytes (VmRSS, VmHWM).
static int64_t procStatusBytes(const char *field) {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f)
    return -1;
  char line[256];
  int64_t kb = -1;
  size_t len = std::strlen(field);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, len) == 0 && line[len] == ':')
      kb = std::atoll(line + len + 1);
  std::fclose(f);
  return kb < 0 ? -1 : kb * 1024;
}

/// See the file comment: the step's resident memory in one mode.
static int measurePeakRss(const std::string &spec) {
  std::string model = spec.substr(0, spec.find(':'));
  std::string rest = spec.substr(spec.find(':') + 1);
  int64_t batch = std::atoll(rest.substr(0, rest.find(':')).c_str());
  bool compiled = rest.substr(rest.find(':') + 1) == "compiled";
  Step step(model, batch);
  std::unique_ptr<CompiledFunction> fn;
  std::unique_ptr<Interpreter> interp;
  std::vector<NDArray> outs;
  if (compiled) {
    fn = std::make_unique<CompiledFunction>(
        CompiledFunction::compile(*step.module, "train_step", CpuOptions()));
    int64_t ownBytes = 0;
    outs = resultBuffers(*fn, step.args, ownBytes);
  } else {
    interp = std::make_unique<Interpreter>();
  }
  // Reset the high-water mark to the current RSS (Linux clear_refs 5).
  if (FILE *f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
  int64_t before = procStatusBytes("VmRSS");
  for (int i = 0; i < 5; ++i) {
    if (compiled) {
      fn->runInto(step.args, outs);
    } else {
      std::vector<NDArray> results = interp->run(step.func, step.args);
      benchmark::DoNotOptimize(results[0].rawData());
    }
  }
  int64_t peak = procStatusBytes("VmHWM");
  std::printf("{\"model\": \"%s\", \"batch\": %lld, \"mode\": \"%s\", "
              "\"rss_before\": %lld, \"rss_peak\": %lld, \"arg_bytes\": %lld, "
              "\"step_bytes\": %lld}\n",
              model.c_str(), static_cast<long long>(batch),
              compiled ? "compiled" : "interpreted",
              static_cast<long long>(before), static_cast<long long>(peak),
              static_cast<long long>(step.argBytes),
              static_cast<long long>(peak - before + step.argBytes));
  return 0;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--peak-rss=", 11) == 0)
      return measurePeakRss(argv[i] + 11);
  benchmark::Initialize(&argc, argv);
  sgemmRate = measureSgemmRate();
  benchmark::AddCustomContext("sgemm_gflops_mlp_gemm_shapes",
                              std::to_string(sgemmRate));
  registerAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
