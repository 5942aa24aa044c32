//===- train_data_parallel.cpp - One model trained by N MPI ranks ---------===//
//
// The Keras tutorial MLP trained data-parallel: every rank runs this
// program, takes its slice of each global batch of 64, and the compiled
// step averages the gradients over the ranks (kc.all_reduce) before Adam,
// so all ranks hold the same weights. Rank 0 prints.
//
//   mpirun -np 2 kcc-example-train-data-parallel [fashion-mnist-dir]
//
// Without mpirun it is the same training on one process.
//
//===----------------------------------------------------------------------===//

#include "kcc/kcc.h"
#include "runtime/data/Dataset.h"

#include <cstdio>

int main(int argc, char **argv) try {
  kcc::Distributed dist = kcc::Distributed::fromEnvironment();
  kcc::FashionMnist data =
      kcc::loadFashionMnist(argc > 1 ? argv[1] : kcc::defaultFashionMnistDir());
  // Every rank builds the same model; the Trainer broadcasts rank 0's
  // weights anyway, so differently seeded ranks would agree too.
  kcc::Sequential model({kcc::Input({28, 28, 1}), kcc::Flatten(),
                         kcc::Dense(128, "relu"), kcc::Dense(64, "relu"),
                         kcc::Dense(10, "softmax")},
                        "mlp", /*seed=*/1);
  kcc::TrainingConfig config; // Keras's defaults: adam, compiled
  config.metrics = {"accuracy"};
  config.dataParallel = dist.size() > 1;
  kcc::Trainer trainer(model, config, dist.isRoot() ? &llvm::errs() : nullptr);
  kcc::FitOptions fit;
  fit.batchSize = 64; // global: 64 / N rows per rank and step
  fit.epochs = 1;
  kcc::History history = trainer.fit(data.train, fit);
  kcc::Logs test = trainer.evaluate(data.test);
  if (dist.isRoot())
    std::printf("%d rank(s): loss %.4f, test accuracy %.4f\n", dist.size(),
                history.epochs.back().values["loss"].number(),
                test["accuracy"].number());
  dist.finalize();
  return 0;
} catch (const kcc::Error &e) {
  std::fprintf(stderr, "error: %s\n", e.what());
  return 1; // without MPI_Finalize: mpirun ends the other ranks
}
