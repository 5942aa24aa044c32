//===- Bench.cpp - kcc bench ----------------------------------------------===//
//
// Times one model's training step compiled and interpreted in one process,
// on one synthetic batch (timings on a shared machine are noisy: the ratio
// measured in one run is the number to read, and each time is the median of
// --repetitions runs of --steps steps, the two modes' runs alternating). Also
// reports what each mode does per step: kernels launched (compiled) against kc
// ops dispatched (interpreted), and the static arena against its lower bound
// (kc-plan-memory) and the interpreter's peak of live intermediates.
//
//===----------------------------------------------------------------------===//

#include "Diagnostics.h"
#include "ModelLoader.h"
#include "Run.h"

#include "codegen/Passes.h"
#include "engine/interpreter/Interpreter.h" // dtypeOf
#include "frontend/Trace.h"
#include "frontend/keras/PythonJson.h"
#include "frontend/training/Jit.h"
#include "passes/TrainStep.h"
#include "runtime/Error.h"
#include "runtime/ProductCalls.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <random>

#include <sys/resource.h>

using namespace kcc;
using namespace kcc::driver;

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

NDArray randomArray(mlir::RankedTensorType type, int64_t classes,
                    std::mt19937_64 &rng) {
  Shape shape(type.getShape().begin(), type.getShape().end());
  NDArray a = NDArray::empty(shape, dtypeOf(type.getElementType()));
  bool integer = llvm::isa<mlir::IntegerType>(type.getElementType());
  std::uniform_real_distribution<double> real(0.0, 1.0);
  std::uniform_int_distribution<int64_t> label(
      0, std::max<int64_t>(0, classes - 1));
  for (int64_t i = 0; i < a.numel(); ++i)
    a.set(i, integer ? static_cast<double>(label(rng)) : real(rng));
  return a;
}

/// `ms` to a tenth of a nanosecond, finer than a clock's tick: a mean over
/// steps or a difference would otherwise print its rounding error
/// (0.08172600000000001, 0.041556499999999996) in the shortest form.
double roundedMs(double ms) { return std::round(ms * 1e7) / 1e7; }

/// ms per step of one repetition: `steps` steps.
double timeRepetition(Executable &exe, const std::vector<NDArray> &xs,
                      const std::vector<NDArray> &ys, int64_t steps) {
  auto start = Clock::now();
  for (int64_t i = 0; i < steps; ++i)
    exe.step(xs, ys);
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
             .count() /
         steps;
}

/// The process's user + system time so far: unlike the wall time, it does
/// not count the time other processes hold the cores.
double processCpuMs() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  auto ms = [](const timeval &t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

/// Per timer (one repetition each, in ms per step), the median over
/// `repetitions`. The timers' repetitions alternate, so load that comes and
/// goes on a shared machine falls on all alike and the ratios stay the
/// numbers to read.
std::vector<double>
timeInterleaved(const std::vector<std::function<double()>> &timers,
                int64_t repetitions) {
  std::vector<std::vector<double>> perStep(timers.size());
  for (int64_t r = 0; r < repetitions; ++r)
    for (size_t k = 0; k < timers.size(); ++k)
      perStep[k].push_back(timers[k]());
  std::vector<double> medians;
  for (std::vector<double> &v : perStep)
    medians.push_back(median(std::move(v)));
  return medians;
}

/// The library's products of one compiled step (runtime/ProductCalls.h),
/// recorded from a step of `exe`.
rt::ProductCallReplay recordProducts(Executable &exe,
                                     const std::vector<NDArray> &xs,
                                     const std::vector<NDArray> &ys) {
  rt::ProductCallRecording recording;
  exe.step(xs, ys);
  return rt::ProductCallReplay(recording.take());
}

} // namespace

int driver::runBench(const BenchConfig &config) {
  if (isMlirInput(config.source) && !config.source.input.empty())
    return fail("kcc bench needs a model with weights: a Keras spec or "
                "--model=mlp|cnn|residual, not " +
                config.source.input);
  auto loaded = loadModel(config.source);
  if (!loaded)
    return fail(llvm::toString(loaded.takeError()));
  auto training = resolveTrainingConfig(*loaded, config.source,
                                        /*defaultMetrics=*/{});
  if (!training)
    return fail(llvm::toString(training.takeError()));

  try {
    auto context = std::make_shared<mlir::MLIRContext>();
    registerFrontendDialects(*context);
    mlir::DialectRegistry registry;
    registerCodegenInterfaces(registry);
    context->appendDialectRegistry(registry);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        buildTrainModule(*context, *loaded->model, *training);
    auto train = module->lookupSymbol<mlir::func::FuncOp>("train_step");
    TrainStepLayout layout = *getTrainStepLayout(train);
    auto argType = [&](unsigned i) {
      return mlir::cast<mlir::RankedTensorType>(train.getArgument(i).getType());
    };
    // One array per input (integer ids 0) and per target (labels in [0,
    // classes): the width of that output of @forward).
    auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward");
    std::mt19937_64 rng(config.source.seed);
    std::vector<NDArray> xs, ys;
    for (unsigned i = 0; i < layout.numInputs; ++i)
      xs.push_back(randomArray(argType(layout.firstInputArg() + i), 0, rng));
    for (unsigned i = 0; i < layout.numTargets; ++i) {
      int64_t classes =
          forward && forward.getNumResults() == layout.numTargets
              ? mlir::cast<mlir::RankedTensorType>(forward.getResultTypes()[i])
                    .getShape()
                    .back()
              : 2;
      ys.push_back(randomArray(argType(layout.targetArg() + i), classes, rng));
    }

    JitOptions quiet;
    quiet.log = nullptr;
    quiet.cpu.target.passes = config.llvmPasses;
    if (config.coldWork)
      quiet.cpu.pipeline->coldWork = *config.coldWork;
    ExecOptions exec = execOptions(*training, quiet);
    exec.useCache = false; // time a real compile
    std::vector<NDArray> weights = loaded->model->getWeights();

    exec.mode = ExecMode::Compiled;
    auto compileStart = Clock::now();
    Executable compiled(context, module->clone(), weights, exec);
    double compileMs =
        std::chrono::duration<double, std::milli>(Clock::now() - compileStart)
            .count();
    exec.mode = ExecMode::Interpreted;
    Executable interpreted(context, module->clone(), weights, exec);

    for (Executable *exe : {&compiled, &interpreted})
      for (int64_t i = 0; i < config.warmup; ++i)
        exe->step(xs, ys);
    rt::ProductCallReplay products = recordProducts(compiled, xs, ys);
    auto repetition = [&](Executable &exe) {
      return [&] { return timeRepetition(exe, xs, ys, config.steps); };
    };
    // The compiled step's CPU time as well: on a loaded machine with
    // passive OpenMP threads it moves far less than the wall time.
    std::vector<double> compiledCpu;
    auto compiledRepetition = [&] {
      double cpuStart = processCpuMs();
      double wall = timeRepetition(compiled, xs, ys, config.steps);
      compiledCpu.push_back((processCpuMs() - cpuStart) / config.steps);
      return wall;
    };
    std::vector<double> ms =
        timeInterleaved({compiledRepetition, repetition(interpreted),
                         [&] {
                           double total = 0;
                           for (int64_t i = 0; i < config.steps; ++i)
                             total += products.runMs();
                           return total / config.steps;
                         }},
                        config.repetitions);
    double compiledMs = ms[0], interpretedMs = ms[1], libraryMs = ms[2];
    // Kernels and memory plan: what the pipeline recorded in the lowering
    // the compiled Executable runs.
    ExecStats cs = compiled.stats(), is = interpreted.stats();
    int64_t interpretedOps = is.steps ? is.opsDispatched / is.steps : 0;
    int64_t kernels = cs.kernelsPerStep();
    bool planned = cs.arenaBytes > 0;

    llvm::json::Object result{
        {"model", loaded->name},
        {"batch", compiled.batchSize()},
        {"optimizer", optimizerName(training->optimizer.kind)},
        {"loss", lossName(training->loss.kind)},
        {"repetitions", config.repetitions},
        {"steps", config.steps},
        {"compiled_ms", roundedMs(compiledMs)},
        {"compiled_cpu_ms", roundedMs(median(std::move(compiledCpu)))},
        {"interpreted_ms", roundedMs(interpretedMs)},
        {"ratio", interpretedMs / compiledMs},
        {"kernels", kernels},
        {"interpreted_ops", interpretedOps},
        {"interpreted_peak_bytes", is.peakLiveBytes},
        {"compile_ms", compileMs},
    };
    result["library_calls"] = cs.libraryCallsPerStep;
    // The products alone, and the rest of the compiled step: kcc's own code.
    result["library_ms"] = roundedMs(libraryMs);
    result["kcc_ms"] = roundedMs(compiledMs - libraryMs);
    if (planned) {
      result["arena_bytes"] = cs.arenaBytes;
      result["arena_lower_bound_bytes"] = cs.arenaLowerBoundBytes;
      result["unplanned_bytes"] = cs.intermediateBytes;
    } else {
      result["arena_bytes"] = nullptr;
      result["arena_lower_bound_bytes"] = nullptr;
    }

    if (config.json) {
      // Shortest round-trip numbers (71.134876, not 71.134876000000006).
      keras::writePythonJson(llvm::outs(), llvm::json::Value(std::move(result)),
                             /*indent=*/2);
      llvm::outs() << "\n";
      return 0;
    }
    llvm::outs()
        << loaded->name << ", batch " << compiled.batchSize() << ", medians of "
        << config.repetitions << " x " << config.steps << " steps\n"
        << llvm::format("  compiled     %9.3f ms/step  %4lld kernels "
                        "(compile %.0f ms)\n",
                        compiledMs, static_cast<long long>(kernels), compileMs)
        << llvm::format("  interpreted  %9.3f ms/step  %4lld ops\n",
                        interpretedMs, static_cast<long long>(interpretedOps))
        << llvm::format("  speedup      %9.2fx\n", interpretedMs / compiledMs)
        << llvm::format(
               "  products     %9.3f ms/step  %4zu library calls alone "
               "(the rest, kcc's code: %.3f ms)\n",
               libraryMs, products.size(), compiledMs - libraryMs);
    if (planned)
      llvm::outs() << llvm::format(
          "  memory       arena %lld B, lower bound %lld B, interpreter peak "
          "%lld B\n",
          static_cast<long long>(cs.arenaBytes),
          static_cast<long long>(cs.arenaLowerBoundBytes),
          static_cast<long long>(is.peakLiveBytes));
  } catch (const Error &e) {
    return fail(e.what());
  }
  return 0;
}
