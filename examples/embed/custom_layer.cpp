//===- custom_layer.cpp - A Keras model with a layer class of its own -----===//
//
// Imports a .keras archive holding the user's registered layer class
// ScaledDense (ScaledDense.h registers its C++ implementation under the
// same name), trains it one epoch on Fashion-MNIST with its whole training
// step compiled, prints the test accuracy, and saves the trained model as a
// .keras archive Keras reloads (with the Python class registered).
//
//   kcc-example-custom-layer model.keras [out.keras] [fashion-mnist-dir]
//
// tests/fixtures/keras/custom/scaled_dense.keras is such a model
// (scripts/keras-fixtures/make_custom_layer_fixtures.py).
//
//===----------------------------------------------------------------------===//

#include "ScaledDense.h"

#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/Saving.h"
#include "frontend/training/Checkpoint.h"
#include "runtime/data/Dataset.h"

#include <cstdio>

int main(int argc, char **argv) try {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s model.keras [out.keras] "
                 "[fashion-mnist-dir]\n",
                 argv[0]);
    return 2;
  }
  demo::registerScaledDense();
  kcc::keras::ImportedModel imported = kcc::keras::importFile(argv[1]);
  kcc::FashionMnist data =
      kcc::loadFashionMnist(argc > 3 ? argv[3] : kcc::defaultFashionMnistDir());

  kcc::TrainingConfig config =
      imported.training.value_or(kcc::TrainingConfig{});
  config.batch = 32;
  config.metrics = {"accuracy"};
  kcc::Executable exe = kcc::jit(*imported.model, config);
  kcc::BatchIterator batches(data.train, config.batch, /*shuffle=*/true,
                             /*seed=*/0);
  batches.startEpoch(0);
  kcc::NDArray x, y;
  double loss = 0, acc = 0;
  for (int64_t b = 0; b < batches.numBatches(); ++b) {
    batches.batch(b, x, y);
    kcc::StepResult r = exe.step(x, y);
    loss += r.loss;
    acc += r.metrics[0];
  }
  int64_t steps = batches.numBatches();
  std::printf("epoch 1: loss %.4f, accuracy %.4f (ScaledDense traced and "
              "differentiated as kcc's own layers)\n",
              loss / steps, acc / steps);
  kcc::NDArray probs = exe.predict(data.test.x);
  int64_t n = probs.dim(0), classes = probs.dim(1), correct = 0;
  for (int64_t i = 0; i < n; ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < classes; ++j)
      if (probs.at(i * classes + j) > probs.at(i * classes + best))
        best = j;
    correct += best == static_cast<int64_t>(data.test.y.at(i));
  }
  std::printf("test accuracy: %.4f\n", static_cast<double>(correct) / n);
  if (argc > 2) {
    kcc::keras::saveKerasArchive(argv[2], imported, kcc::captureState(exe),
                                 config);
    std::printf("saved %s\n", argv[2]);
  }
  return 0;
} catch (const kcc::Error &e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1;
}
