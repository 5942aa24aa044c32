//===- train_mlp.cpp - Embedding kcc's JIT in a C++ program ---------------===//
//
// Builds the Keras tutorial MLP with the C++ layer API, compiles its whole
// training step with kcc::jit, trains one epoch of Fashion-MNIST, prints the
// test accuracy, then times the same step interpreted (op by op) to show
// what compiling buys.
//
//   kcc-example-train-mlp [fashion-mnist-dir]
//
//===----------------------------------------------------------------------===//

#include "frontend/training/Jit.h"
#include "kcc/kcc.h"
#include "runtime/data/Dataset.h"

#include <chrono>
#include <cstdio>

namespace {

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

/// Fraction of rows of `probs` whose argmax is the label.
double accuracy(const kcc::NDArray &probs, const kcc::NDArray &labels) {
  int64_t n = probs.dim(0), classes = probs.dim(1), correct = 0;
  const float *p = probs.data<float>();
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (p[i * classes + j] > p[i * classes + best])
        best = j;
    correct += best == static_cast<int64_t>(labels.at(i));
  }
  return static_cast<double>(correct) / n;
}

} // namespace

int main(int argc, char **argv) try {
  kcc::FashionMnist data =
      kcc::loadFashionMnist(argc > 1 ? argv[1] : kcc::defaultFashionMnistDir());
  kcc::Sequential model({kcc::Input({28, 28, 1}), kcc::Flatten(),
                         kcc::Dense(128, "relu"), kcc::Dense(64, "relu"),
                         kcc::Dense(10, "softmax")},
                        "mlp", /*seed=*/1);
  const int64_t batch = 32;
  kcc::TrainingConfig config; // Keras's defaults: adam, compiled
  config.batch = batch;
  config.metrics = {"accuracy"};
  kcc::Executable exe = kcc::jit(model, config);

  kcc::BatchIterator batches(data.train, batch, /*shuffle=*/true, /*seed=*/0);
  batches.startEpoch(0);
  kcc::NDArray x, y;
  double loss = 0, acc = 0;
  auto start = std::chrono::steady_clock::now();
  for (int64_t b = 0; b < batches.numBatches(); ++b) {
    batches.batch(b, x, y);
    kcc::StepResult r = exe.step(x, y);
    loss += r.loss;
    acc += r.metrics[0];
  }
  double epoch = seconds(start);
  int64_t steps = batches.numBatches();
  std::printf("epoch 1: %lld steps in %.1f s (%.3f ms/step), loss %.4f, "
              "accuracy %.4f\n",
              static_cast<long long>(steps), epoch, 1e3 * epoch / steps,
              loss / steps, acc / steps);
  std::printf("test accuracy: %.4f\n",
              accuracy(exe.predict(data.test.x), data.test.y));

  // The same step, interpreted, on the trained weights.
  config.mode = kcc::ExecMode::Interpreted;
  kcc::Executable interp = kcc::jit(model, config);
  interp.setWeights(exe.getWeights());
  const int64_t timed = 200;
  double t[2];
  kcc::Executable *runs[2] = {&exe, &interp};
  for (int k = 0; k < 2; ++k) {
    batches.batch(0, x, y);
    runs[k]->step(x, y); // warm-up
    auto s = std::chrono::steady_clock::now();
    for (int64_t b = 0; b < timed; ++b) {
      batches.batch(b, x, y);
      runs[k]->step(x, y);
    }
    t[k] = seconds(s) / timed;
  }
  kcc::ExecStats cs = exe.stats(), is = interp.stats();
  std::printf("step time: compiled %.3f ms (%lld kernels), interpreted %.3f "
              "ms (%lld ops/step): interpreted/compiled = %.2fx\n",
              1e3 * t[0], static_cast<long long>(cs.kernelsPerStep()),
              1e3 * t[1], static_cast<long long>(is.opsDispatched / is.steps),
              t[1] / t[0]);
  model.setWeights(exe.getWeights());
  return 0;
} catch (const kcc::Error &e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
