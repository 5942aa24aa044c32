//===- train_aot.cpp - Train the MLP with an AOT-compiled step ------------===//
//
// The training step here was compiled by kcc at build time:
//
//   kcc --model=mlp --emit=obj --batch 32 --metrics=accuracy --prefix=mlp_
//       -o mlp_step.o                      (also writes mlp_step.h)
//
// mlp_step.h declares mlp_train_step and mlp_forward with bare-pointer
// arguments and describes every argument (kc.name, dtype, shape) in the
// tables mlp_train_step_args / _results, so this program needs nothing of
// kcc but that header, the object and the kcc runtime libraries. It owns all
// state: params, Adam's moments and the step count, which the step writes
// over their arguments (the header's mlp_train_step_in_place table), and the
// scratch arena each function asks for (its ARENA_BYTES).
//
// Initial weights (documented, Keras's defaults): every parameter of rank
// >= 2 (a kernel) is glorot_uniform, U(-l, l) with l = sqrt(6 / (fan_in +
// fan_out)), fan_in = shape[-2] * receptive field, fan_out = shape[-1] *
// receptive field (receptive field = product of the leading dims, 1 for
// Dense); every other parameter (a bias) is zero. Seeded, so runs repeat.
//
// Usage: train_aot [steps = 300] [fashion-mnist dir]. Prints the mean loss
// and accuracy every 50 steps and the test accuracy; exits 1 unless the
// loss went down, 77 when the dataset is missing.
//
//===----------------------------------------------------------------------===//

#include "mlp_step.h"

#include "runtime/Error.h"
#include "runtime/data/Dataset.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

namespace {

static_assert(MLP_FORWARD_NUM_ARGS == MLP_TRAIN_STEP_NUM_PARAMS + 1,
              "@forward takes the params and one input");

constexpr int kWindow = 50;

/// A 64-byte aligned, zeroed buffer.
void *allocate(int64_t bytes) {
  size_t rounded = (static_cast<size_t>(bytes) + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded ? rounded : 64);
  std::memset(p, 0, rounded);
  return p;
}

/// One buffer per tensor of a table.
struct Buffers {
  std::vector<void *> ptrs, owned;
  Buffers(const kcc_tensor_desc *descs, int n) {
    for (int i = 0; i < n; ++i)
      owned.push_back(ptrs.emplace_back(allocate(descs[i].bytes)));
  }
  ~Buffers() {
    for (void *p : owned)
      std::free(p);
  }
};

void glorotUniform(const kcc_tensor_desc &d, float *out, std::mt19937 &rng) {
  if (d.rank < 2)
    return; // biases stay zero
  int64_t receptive = 1;
  for (int i = 0; i < d.rank - 2; ++i)
    receptive *= d.shape[i];
  double fanIn = static_cast<double>(d.shape[d.rank - 2] * receptive);
  double fanOut = static_cast<double>(d.shape[d.rank - 1] * receptive);
  double limit = std::sqrt(6.0 / (fanIn + fanOut));
  std::uniform_real_distribution<float> u(-limit, limit);
  for (int64_t i = 0; i < d.numel; ++i)
    out[i] = u(rng);
}

} // namespace

int main(int argc, char **argv) {
  // The step's parallel loops run on LLVM's libomp, oneDNN on libgomp: idle
  // libomp threads must sleep at once instead of spinning on the cores
  // oneDNN needs next (the JIT does the same; read at libomp's first use).
  ::setenv("KMP_BLOCKTIME", "0", /*overwrite=*/0);
  int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  if (steps < 2 * kWindow) {
    std::fprintf(stderr, "train_aot: need at least %d steps\n", 2 * kWindow);
    return 2;
  }
  kcc::FashionMnist data;
  try {
    data = kcc::loadFashionMnist(argc > 2 ? argv[2]
                                          : kcc::defaultFashionMnistDir());
  } catch (const kcc::Error &e) {
    std::fprintf(stderr, "train_aot: skipped: %s\n", e.what());
    return 77;
  }

  // Two sets of params, optimizer state and step count: `in` is read by the
  // step, `out` written; everything else is an argument or result of its own.
  Buffers args(mlp_train_step_args, MLP_TRAIN_STEP_NUM_ARGS);
  Buffers results(mlp_train_step_results, MLP_TRAIN_STEP_NUM_RESULTS);
  std::mt19937 rng(0);
  for (int i = 0; i < MLP_TRAIN_STEP_NUM_PARAMS; ++i) {
    std::printf("param %-16s f32[", mlp_train_step_args[i].name);
    for (int k = 0; k < mlp_train_step_args[i].rank; ++k)
      std::printf(k ? "x%lld" : "%lld",
                  static_cast<long long>(mlp_train_step_args[i].shape[k]));
    std::printf("]\n");
    glorotUniform(mlp_train_step_args[i], static_cast<float *>(args.ptrs[i]),
                  rng);
  }
  *static_cast<float *>(args.ptrs[MLP_TRAIN_STEP_ARG_LEARNING_RATE]) =
      static_cast<float>(MLP_LEARNING_RATE);
  // The step writes these results over their arguments: pass the argument's
  // buffer for them (all of params, moments and the counter, for Adam).
  for (int i = 0; i < MLP_TRAIN_STEP_NUM_IN_PLACE; ++i)
    results.ptrs[mlp_train_step_in_place[i][0]] =
        args.ptrs[mlp_train_step_in_place[i][1]];
  std::unique_ptr<void, decltype(&std::free)> stepArena(
      allocate(MLP_TRAIN_STEP_ARENA_BYTES), std::free);
  std::unique_ptr<void, decltype(&std::free)> forwardArena(
      allocate(MLP_FORWARD_ARENA_BYTES), std::free);

  const int64_t batch = mlp_train_step_args[MLP_TRAIN_STEP_ARG_TARGET].shape[0];
  kcc::BatchIterator batches(data.train, batch, /*shuffle=*/true, /*seed=*/0);
  kcc::NDArray x, y;
  std::vector<double> windowLoss;
  double lossSum = 0, accSum = 0;
  int64_t epoch = 0, inEpoch = 0;
  batches.startEpoch(epoch);
  for (int step = 1; step <= steps; ++step) {
    if (inEpoch == batches.numBatches()) {
      batches.startEpoch(++epoch);
      inEpoch = 0;
    }
    batches.batch(inEpoch++, x, y);
    // The batch arrays are the arguments themselves: no copy.
    void *stepArgs[MLP_TRAIN_STEP_NUM_ARGS];
    std::memcpy(stepArgs, args.ptrs.data(), sizeof(stepArgs));
    stepArgs[MLP_TRAIN_STEP_ARG_FIRST_INPUT] = x.rawData();
    stepArgs[MLP_TRAIN_STEP_ARG_TARGET] = y.rawData();
    mlp_train_step_packed(stepArgs, results.ptrs.data(), stepArena.get());

    float loss =
        *static_cast<float *>(results.ptrs[MLP_TRAIN_STEP_RESULT_LOSS]);
    if (!std::isfinite(loss)) {
      std::fprintf(stderr, "train_aot: step %d: loss is %f\n", step, loss);
      return 1;
    }
    lossSum += loss;
    accSum +=
        *static_cast<float *>(results.ptrs[MLP_TRAIN_STEP_RESULT_FIRST_METRIC]);
    // New params, state and step count become the next step's inputs (a
    // no-op for those written in place: both pointers are the argument's).
    for (int i = 0; i < MLP_TRAIN_STEP_NUM_PARAMS; ++i)
      std::swap(args.ptrs[MLP_TRAIN_STEP_ARG_FIRST_PARAM + i],
                results.ptrs[MLP_TRAIN_STEP_RESULT_FIRST_PARAM + i]);
    for (int i = 0; i < MLP_TRAIN_STEP_NUM_OPTIMIZER_STATE; ++i)
      std::swap(args.ptrs[MLP_TRAIN_STEP_ARG_FIRST_OPTIMIZER_STATE + i],
                results.ptrs[MLP_TRAIN_STEP_RESULT_FIRST_OPTIMIZER_STATE + i]);
    std::swap(args.ptrs[MLP_TRAIN_STEP_ARG_ITERATIONS],
              results.ptrs[MLP_TRAIN_STEP_RESULT_ITERATIONS]);

    if (step % kWindow == 0) {
      windowLoss.push_back(lossSum / kWindow);
      std::printf("step %4d  loss %.4f  accuracy %.4f\n", step,
                  lossSum / kWindow, accSum / kWindow);
      lossSum = accSum = 0;
    }
  }
  int64_t iterations =
      *static_cast<int64_t *>(args.ptrs[MLP_TRAIN_STEP_ARG_ITERATIONS]);

  // Test accuracy with the AOT-compiled @forward on the trained params.
  Buffers logits(mlp_forward_results, MLP_FORWARD_NUM_RESULTS);
  kcc::BatchIterator test(data.test, batch, /*shuffle=*/false, 0);
  test.startEpoch(0);
  int64_t correct = 0, seen = 0;
  const int64_t classes = mlp_forward_results[0].shape[1];
  for (int64_t b = 0; b < test.numBatches(); ++b) {
    test.batch(b, x, y);
    void *fwdArgs[MLP_FORWARD_NUM_ARGS];
    for (int i = 0; i < MLP_TRAIN_STEP_NUM_PARAMS; ++i)
      fwdArgs[i] = args.ptrs[MLP_TRAIN_STEP_ARG_FIRST_PARAM + i];
    fwdArgs[MLP_TRAIN_STEP_NUM_PARAMS] = x.rawData();
    mlp_forward_packed(fwdArgs, logits.ptrs.data(), forwardArena.get());
    const float *p = static_cast<const float *>(logits.ptrs[0]);
    for (int64_t i = 0; i < batch; ++i, ++seen) {
      int64_t best = 0;
      for (int64_t j = 1; j < classes; ++j)
        if (p[i * classes + j] > p[i * classes + best])
          best = j;
      correct += best == y.data<int32_t>()[i];
    }
  }
  double accuracy = static_cast<double>(correct) / seen;
  std::printf("%lld steps; test accuracy %.4f on %lld images\n",
              static_cast<long long>(iterations), accuracy,
              static_cast<long long>(seen));

  if (iterations != steps) {
    std::fprintf(stderr, "train_aot: the step counter says %lld, not %d\n",
                 static_cast<long long>(iterations), steps);
    return 1;
  }
  if (!(windowLoss.back() < 0.8 * windowLoss.front())) {
    std::fprintf(stderr, "train_aot: the loss did not go down: %.4f -> %.4f\n",
                 windowLoss.front(), windowLoss.back());
    return 1;
  }
  if (accuracy < 0.5) {
    std::fprintf(stderr, "train_aot: test accuracy %.4f is too low\n",
                 accuracy);
    return 1;
  }
  return 0;
}
