//===- GpuBenchmark.cpp - Train steps on the GPU: compiled vs eager -------===//
//
// For each model: one Adam step (sparse categorical crossentropy) compiled
// by kc-cuda-pipeline and replayed as a CUDA graph with device-resident
// state, against the same step op by op (GPU eager: one generated program
// per op, one allocation per result, state also resident). BM_Sgemm times
// the step's largest GEMM alone through the same cuBLASLt path: the
// compiled step's counter `gemm_frac` is (the step's GEMM FLOPs / step time)
// over that rate, the fraction of cuBLAS's GEMM rate the whole step keeps.
// FP32 throughout (COMPUTE_32F; run.sh also sets NVIDIA_TF32_OVERRIDE=0).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaPasses.h"
#include "engine/cuda/CudaEager.h"
#include "engine/cuda/CudaExecutable.h"
#include "engine/interpreter/Interpreter.h"
#include "frontend/Trace.h"
#include "frontend/models/ReferenceModels.h"
#include "kcc/kcc.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"
#include "runtime/cuda/CudaApi.h"

#include "ir/KcDialect.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <benchmark/benchmark.h>

#include <iostream>
#include <map>
#include <random>
#include <sstream>

using namespace kcc;

namespace {

/// Dense layers as kc text: in -> hidden... -> out (logits), relu between.
std::string mlpText(int64_t batch, const std::vector<int64_t> &dims) {
  std::ostringstream os;
  os << "func.func @forward(";
  for (size_t l = 0; l + 1 < dims.size(); ++l)
    os << "%w" << l << ": tensor<" << dims[l] << "x" << dims[l + 1]
       << "xf32> {kc.name = \"dense_" << l
       << "/kernel\", kc.trainable = true}, %b" << l << ": tensor<"
       << dims[l + 1] << "xf32> {kc.name = \"dense_" << l
       << "/bias\", kc.trainable = true}, ";
  os << "%x: tensor<" << batch << "x" << dims[0]
     << "xf32> {kc.input = 0 : i64}) -> tensor<" << batch << "x" << dims.back()
     << "xf32> {\n";
  std::string h = "%x";
  for (size_t l = 0; l + 1 < dims.size(); ++l) {
    std::string t = "tensor<" + std::to_string(batch) + "x" +
                    std::to_string(dims[l + 1]) + "xf32>";
    std::string in = "tensor<" + std::to_string(batch) + "x" +
                     std::to_string(dims[l]) + "xf32>";
    std::string L = std::to_string(l);
    os << "  %m" << L << " = kc.matmul " << h << ", %w" << L << " : " << in
       << ", tensor<" << dims[l] << "x" << dims[l + 1] << "xf32> -> " << t
       << "\n  %bb" << L << " = kc.broadcast_to %b" << L << " : tensor<"
       << dims[l + 1] << "xf32> -> " << t << "\n  %a" << L << " = kc.add %m"
       << L << ", %bb" << L << " : " << t << "\n";
    h = "%a" + L;
    if (l + 2 < dims.size()) {
      os << "  %r" << L << " = kc.relu %a" << L << " : " << t << "\n";
      h = "%r" + L;
    }
  }
  os << "  return " << h << " : tensor<" << batch << "x" << dims.back()
     << "xf32>\n}\n";
  return os.str();
}

/// One model's train step, compiled, plus its seeded arguments.
struct Workload {
  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp step;
  TrainStepLayout layout;
  cuda::CudaProgram program;
  std::vector<NDArray> args;
  double gemmFlops = 0;
};

std::unique_ptr<Workload> makeWorkload(const std::string &name) {
  auto w = std::make_unique<Workload>();
  registerFrontendDialects(w->ctx);
  w->ctx.loadDialect<kc::KcDialect>();
  bool logits = true;
  if (name == "mlp4096") {
    w->module = mlir::parseSourceString<mlir::ModuleOp>(
        mlpText(512, {4096, 4096, 4096, 10}), &w->ctx);
  } else {
    std::unique_ptr<Model> model = name == "mlp"   ? models::buildMlp(1)
                                   : name == "cnn" ? models::buildCnn(1)
                                                   : models::buildResidual(1);
    TraceOptions opts;
    opts.batch = name == "cnn" ? 64 : 256;
    w->module = traceForward(w->ctx, *model, opts);
    logits = name != "mlp";
  }
  if (!w->module)
    throw Error("cannot build " + name);
  TrainingConfig train; // adam, sparse_categorical_crossentropy
  train.loss.fromLogits = logits;
  mlir::PassManager pm(&w->ctx);
  buildTrainPipeline(pm, train);
  if (mlir::failed(pm.run(*w->module)))
    throw Error("train step of " + name + " failed");
  w->step = w->module->lookupSymbol<mlir::func::FuncOp>("train_step");
  w->layout = *getTrainStepLayout(w->step);
  auto program = compileForCuda(*w->module, "train_step", CudaOptions());
  if (mlir::failed(program))
    throw Error("kc-cuda-pipeline failed on " + name);
  w->program = std::move(*program);
  for (const cuda::LibraryCall &c : w->program.calls) {
    // (a0, a1, b0, b1, o0, o1, ta, tb): M*N = out, K = a's other dim.
    int64_t k = c.ints[6] ? c.ints[0] : c.ints[1];
    w->gemmFlops += 2.0 * double(c.ints[4]) * double(c.ints[5]) * double(k);
  }
  std::mt19937 gen(3);
  std::normal_distribution<double> normal(0, 0.02);
  for (unsigned i = 0; i < w->step.getNumArguments(); ++i) {
    auto t =
        mlir::cast<mlir::RankedTensorType>(w->step.getArgument(i).getType());
    Shape shape(t.getShape().begin(), t.getShape().end());
    NDArray a = NDArray::zeros(shape, dtypeOf(t.getElementType()));
    if (i < w->layout.numParams || i == w->layout.firstInputArg())
      for (int64_t k = 0; k < a.numel(); ++k)
        a.set(k, normal(gen));
    if (i == w->layout.learningRateArg())
      a.set(0, 1e-3);
    if (i == w->layout.targetArg())
      for (int64_t k = 0; k < a.numel(); ++k)
        a.set(k, k % 10);
    w->args.push_back(a);
  }
  return w;
}

Workload &workload(const std::string &name) {
  static std::map<std::string, std::unique_ptr<Workload>> cache;
  auto &w = cache[name];
  if (!w)
    w = makeWorkload(name);
  return *w;
}

std::vector<std::pair<unsigned, unsigned>> carried(const TrainStepLayout &l) {
  std::vector<std::pair<unsigned, unsigned>> c;
  for (unsigned i = 0; i < l.numParams + l.numOptimizerState; ++i)
    c.push_back({l.firstParamResult() + i, i});
  c.push_back({l.iterationsResult(), l.iterationsArg()});
  return c;
}

std::map<unsigned, NDArray> perStepInputs(const Workload &w) {
  std::map<unsigned, NDArray> m;
  for (unsigned i = w.layout.firstInputArg(); i < w.args.size(); ++i)
    m[i] = w.args[i];
  return m;
}

bool skipWithoutDevice(benchmark::State &state) {
  std::string why;
  if (cuda::deviceAvailable(&why))
    return false;
  state.SkipWithError(why.c_str());
  return true;
}

void BM_Compiled(benchmark::State &state, std::string name) {
  if (skipWithoutDevice(state))
    return;
  try {
    Workload &w = workload(name);
    auto exe = cuda::CudaExecutable::load(w.program);
    exe->setCarry(carried(w.layout));
    for (unsigned i = 0; i < w.layout.firstInputArg(); ++i)
      exe->upload(i, w.args[i]);
    auto inputs = perStepInputs(w);
    exe->step(inputs, {w.layout.lossResult()}); // capture both parities
    exe->step(inputs, {w.layout.lossResult()});
    for (auto _ : state)
      benchmark::DoNotOptimize(exe->step(inputs, {w.layout.lossResult()}));
    cuda::CudaCounts c = exe->counts();
    state.counters["kernels"] = double(c.kernelLaunches);
    state.counters["gemms"] = double(c.gemmCalls);
    state.counters["arena_MB"] = double(c.arenaBytes) / 1e6;
    state.counters["gemm_flops"] = w.gemmFlops;
    state.counters["gemm_TFLOPs"] = benchmark::Counter(
        w.gemmFlops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  } catch (const Error &e) {
    state.SkipWithError(e.what());
  }
}

void BM_Eager(benchmark::State &state, std::string name) {
  if (skipWithoutDevice(state))
    return;
  try {
    Workload &w = workload(name);
    cuda::CudaEager eager;
    eager.setResident(w.step, w.args);
    auto inputs = perStepInputs(w);
    auto carry = carried(w.layout);
    eager.stepResident(w.step, carry, inputs, {w.layout.lossResult()});
    int64_t ops0 = eager.counts().opsDispatched;
    int64_t iters = 0;
    for (auto _ : state) {
      benchmark::DoNotOptimize(
          eager.stepResident(w.step, carry, inputs, {w.layout.lossResult()}));
      ++iters;
    }
    state.counters["ops_per_step"] =
        iters ? double(eager.counts().opsDispatched - ops0) / double(iters) : 0;
    state.counters["programs"] = double(eager.counts().compiles);
    state.counters["gemm_TFLOPs"] = benchmark::Counter(
        w.gemmFlops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  } catch (const Error &e) {
    state.SkipWithError(e.what());
  }
}

/// The largest GEMM of mlp4096's step (512x4096 @ 4096x4096) alone, through
/// the executable's cuBLASLt path, captured as a graph of one node.
void BM_Sgemm(benchmark::State &state) {
  if (skipWithoutDevice(state))
    return;
  try {
    static mlir::MLIRContext ctx;
    ctx.loadDialect<kc::KcDialect, mlir::func::FuncDialect>();
    const char *text = R"(
func.func @gemm(%a: tensor<512x4096xf32>, %b: tensor<4096x4096xf32>) -> tensor<512x4096xf32> {
  %0 = kc.matmul %a, %b : tensor<512x4096xf32>, tensor<4096x4096xf32> -> tensor<512x4096xf32>
  return %0 : tensor<512x4096xf32>
})";
    auto module = mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
    auto program = compileForCuda(*module, "gemm", CudaOptions());
    if (mlir::failed(program))
      throw Error("cannot compile the GEMM");
    auto exe = cuda::CudaExecutable::load(*program);
    exe->upload(0, NDArray::zeros({512, 4096}, DType::F32));
    exe->upload(1, NDArray::zeros({4096, 4096}, DType::F32));
    exe->step({}, {});
    for (auto _ : state)
      exe->step({}, {});
    double flops = 2.0 * 512 * 4096 * 4096;
    state.counters["gemm_TFLOPs"] = benchmark::Counter(
        flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
  } catch (const Error &e) {
    state.SkipWithError(e.what());
  }
}

} // namespace

BENCHMARK(BM_Sgemm)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_Compiled, mlp4096, std::string("mlp4096"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Eager, mlp4096, std::string("mlp4096"))
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Compiled, mlp, std::string("mlp"))
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Eager, mlp, std::string("mlp"))
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Compiled, cnn, std::string("cnn"))
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Eager, cnn, std::string("cnn"))
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Compiled, residual, std::string("residual"))
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Eager, residual, std::string("residual"))
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

BENCHMARK_MAIN();
