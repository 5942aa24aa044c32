//===- Predict.cpp - kcc predict: a model's outputs on NumPy arrays -------===//
//
//   kcc predict MODEL --data X.npz -o P.npy
//
// MODEL is any model kcc loads (a .keras archive kcc or Keras saved, an
// .h5, a spec, --model=...). The input array and the output's extension
// are checked before anything is compiled; the output is written
// atomically, so a failure leaves no partial file. An .npz output holds
// one array per output layer, named after it.
//
//===----------------------------------------------------------------------===//

#include "Diagnostics.h"
#include "ModelLoader.h"
#include "PredictData.h"
#include "Run.h"

#include "frontend/training/Jit.h"
#include "runtime/Error.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/NpzWriter.h"

#include "llvm/Support/Path.h"

using namespace kcc;
using namespace kcc::driver;

int driver::runPredict(const PredictConfig &config) {
  llvm::StringRef ext = llvm::sys::path::extension(config.output);
  if (ext != ".npy" && ext != ".npz")
    return fail("-o " + config.output +
                ": the output must be a .npy or .npz file");
  if (config.source.batch <= 0)
    return fail("--batch must be positive, got " +
                std::to_string(config.source.batch));
  checkWritable(config.output);
  llvm::Expected<LoadedModel> loaded = loadModel(config.source);
  if (!loaded)
    return fail(loaded.takeError());
  Model &model = *loaded->model;
  if (model.numOutputs() != 1)
    return fail("model '" + model.name() + "' has " +
                std::to_string(model.numOutputs()) +
                " outputs; kcc predict runs models with one");
  NDArray x = modelInput(model, readDataFile(config.data), config.data);
  int64_t rows = x.shape()[0];
  Executable exe =
      jitInference(model, std::min(config.source.batch, rows), config.mode);
  NDArray predictions = exe.predict(x);
  const Tensor &out = model.graphOutputs()[0];
  std::string name =
      out.node()->layer ? Layer(out.node()->layer).name() : "output";
  if (ext == ".npz")
    writeNpz(config.output, {{name, predictions}});
  else
    writeNpy(config.output, predictions);
  llvm::outs() << "kcc: wrote " << config.output << ": '" << name << "' "
               << dtypeName(predictions.dtype())
               << shapeToString(predictions.shape()) << " for " << rows
               << " examples of " << config.data << "\n";
  return 0;
}
