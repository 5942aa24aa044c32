//===- checkpoint.cpp - Train, save a .keras checkpoint, resume -----------===//
//
// What ModelCheckpoint and --resume do, through the library API: train a
// model for a number of steps on the x / y of a .npz file, save it as a
// Keras 3 archive (weights, optimizer variables, iteration count), or
// reload such an archive and continue where it stopped. Keras's
// keras.saving.load_model reads what it writes (scripts/keras-roundtrip.py).
//
//   kcc-example-checkpoint train  MODEL      DATA.npz STEPS BATCH OUT.keras
//   kcc-example-checkpoint resume CKPT.keras DATA.npz STEPS BATCH OUT.keras
//
// MODEL is a Keras spec (.json, .keras, .h5) or
// builtin:mlp|cnn|residual|branches|convs|recurrent.
// An OUT ending in .weights.h5 gets the weights alone, as Keras's
// model.save_weights() writes them (with the optimizer's variables).
//
// Step i trains on rows [i*BATCH, (i+1)*BATCH) of the data, wrapping
// around, i counted from the start of training (so a resumed run picks
// the batches the uninterrupted one would).
//
//===----------------------------------------------------------------------===//

#include "frontend/training/Checkpoint.h"
#include "frontend/keras/Saving.h"
#include "frontend/models/ReferenceModels.h"
#include "kcc/kcc.h"
#include "runtime/data/Npz.h"

#include <cstdio>
#include <cstring>
#include <string>

using namespace kcc;

namespace {

/// Rows [start, start + n) of `a`.
NDArray rows(const NDArray &a, int64_t start, int64_t n) {
  Shape shape = a.shape();
  int64_t stride = a.numel() / shape[0];
  shape[0] = n;
  NDArray out = NDArray::empty(shape, a.dtype());
  size_t item = dtypeSize(a.dtype());
  std::memcpy(out.rawData(),
              static_cast<const char *>(a.rawData()) + start * stride * item,
              n * stride * item);
  return out;
}

/// `a` as F32 (inputs) or I32 (labels).
NDArray cast(const NDArray &a, DType dtype) {
  if (a.dtype() == dtype)
    return a;
  NDArray out = NDArray::empty(a.shape(), dtype);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (dtype == DType::F32)
      out.data<float>()[i] = static_cast<float>(a.at(i));
    else
      out.data<int32_t>()[i] = static_cast<int32_t>(a.at(i));
  }
  return out;
}

/// A functional model whose layers Keras lists in another order than they
/// are called: the short branch is Add's first argument, so a walk from
/// the output meets dense_b before dense_a1, while Keras orders by depth.
std::unique_ptr<Model> buildBranches() {
  Tensor in = Input({28, 28, 1});
  Tensor flat = Flatten()(in);
  Tensor b = Dense(16).named("dense_b")(flat);
  Tensor a =
      Dense(16).named("dense_a2")(Dense(32, "relu").named("dense_a1")(flat));
  Tensor sum = Add()({b, a});
  return std::make_unique<Model>(in, Dense(10)(sum), "branches", 0);
}

/// Every convolution layer kcc has, with the options Keras's config names:
/// strided, dilated and grouped Conv2D, DepthwiseConv2D (depth_multiplier 2),
/// a dilated SeparableConv2D and a strided Conv2DTranspose.
std::unique_ptr<Sequential> buildConvs() {
  return std::make_unique<Sequential>(
      std::vector<SequentialEntry>{
          Input({28, 28, 1}), Conv2D(8, 3, 2, "same", 1, 1, "relu"),
          Conv2D(8, 3, 1, "same", 2, 2, "relu"),
          DepthwiseConv2D(3, 2, "same", 2, 1, "relu"),
          SeparableConv2D(8, 3, 1, "same", 2, 1, "relu"),
          Conv2DTranspose(4, 3, 2, "valid", 1, "relu"), Flatten(), Dense(10)},
      "convs", 0);
}

/// The recurrent layers with their options, on the image rows as 28
/// steps: a Bidirectional LSTM returning sequences, a GRU without
/// reset_after going backwards, and a SimpleRNN's return_state outputs.
std::unique_ptr<Model> buildRecurrent() {
  Tensor in = Input({28, 28, 1});
  Tensor x = Reshape({28, 28})(in);
  RecurrentOptions sequences;
  sequences.returnSequences = true;
  x = Bidirectional(LSTM(8, "tanh", "sigmoid", true, "glorot_uniform",
                         "orthogonal", "zeros", true, sequences))(x);
  RecurrentOptions backwards = sequences;
  backwards.goBackwards = true;
  x = GRU(6, "tanh", "sigmoid", true, "glorot_uniform", "orthogonal", "zeros",
          backwards, /*resetAfter=*/false)(x);
  RecurrentOptions state;
  state.returnState = true;
  std::vector<Tensor> outs =
      SimpleRNN(5, "tanh", true, "glorot_uniform", "orthogonal", "zeros", state)
          .call({x}, CallContext{});
  Tensor merged = Concatenate()({outs[0], outs[1]});
  return std::make_unique<Model>(in, Dense(10)(merged), "recurrent", 0);
}

keras::ImportedModel loadModel(const std::string &what) {
  keras::ImportedModel imported;
  std::string builtin = what.rfind("builtin:", 0) == 0 ? what.substr(8) : "";
  if (builtin.empty())
    return keras::importFile(what);
  if (builtin == "mlp")
    imported.model = models::buildMlp(0);
  else if (builtin == "cnn")
    imported.model = models::buildCnn(0);
  else if (builtin == "residual")
    imported.model = models::buildResidual(0);
  else if (builtin == "branches")
    imported.model = buildBranches();
  else if (builtin == "convs")
    imported.model = buildConvs();
  else if (builtin == "recurrent")
    imported.model = buildRecurrent();
  else
    throw Error("unknown builtin model '" + builtin + "'");
  TrainingConfig &config = imported.training.emplace();
  config.loss.fromLogits = builtin != "mlp";
  config.metrics = {"accuracy"};
  // Not a Keras 3 source: its config is generated.
  imported.kerasMajorVersion = 0;
  return imported;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 7 || (std::strcmp(argv[1], "train") != 0 &&
                    std::strcmp(argv[1], "resume") != 0)) {
    std::fprintf(stderr,
                 "usage: %s train|resume MODEL DATA.npz STEPS BATCH "
                 "OUT.keras\n",
                 argv[0]);
    return 2;
  }
  try {
    bool resume = std::strcmp(argv[1], "resume") == 0;
    int64_t steps = std::stoll(argv[4]), batch = std::stoll(argv[5]);
    std::string out = argv[6];
    NDArray x = cast(readNpzArray(argv[3], "x"), DType::F32);
    NDArray y = cast(readNpzArray(argv[3], "y"), DType::I32);
    int64_t n = x.shape()[0];
    if (n % batch != 0)
      throw Error("the number of examples must be a multiple of BATCH");

    keras::Checkpoint ckpt;
    if (resume)
      ckpt = keras::loadCheckpoint(argv[2]);
    else
      ckpt.imported = loadModel(argv[2]);
    TrainingConfig config = ckpt.imported.training.value_or(TrainingConfig());
    config.batch = batch;
    JitOptions quiet;
    quiet.log = nullptr;
    Executable exe = jit(*ckpt.imported.model, config, quiet);
    if (resume)
      restoreState(exe, ckpt);
    double loss = 0;
    for (int64_t s = 0; s < steps; ++s) {
      int64_t start = (exe.iterations() * batch) % n;
      loss = exe.step(rows(x, start, batch), rows(y, start, batch)).loss;
    }
    keras::ModelState state = captureState(exe, ckpt.epoch + 1);
    if (llvm::StringRef(out).ends_with(".weights.h5"))
      keras::saveWeightsH5(out, ckpt.imported, state); // save_weights()
    else
      keras::saveKerasArchive(out, ckpt.imported, state, config);
    std::printf("trained %lld steps (iterations %lld), last loss %.6f, "
                "saved %s\n",
                static_cast<long long>(steps),
                static_cast<long long>(exe.iterations()), loss, out.c_str());
  } catch (const Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
