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

#include <map>

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
  size_t numOutputs = model.numOutputs();
  if (numOutputs != 1 && ext != ".npz")
    return fail("-o " + config.output + ": model '" + model.name() + "' has " +
                std::to_string(numOutputs) +
                " outputs; write them to a .npz (one array per output)");
  std::vector<NDArray> inputs =
      modelInputs(model, readDataFile(config.data), config.data);
  int64_t rows = inputs[0].shape()[0];
  // Compile reports go where the result line goes: piped output in order.
  Executable exe = jitInference(model, std::min(config.source.batch, rows),
                                config.mode, &llvm::outs());
  std::vector<NDArray> outputs = exe.predict(inputs);
  std::vector<std::string> names = model.outputNames();
  std::map<std::string, NDArray> arrays;
  for (size_t k = 0; k < numOutputs; ++k) {
    if (names[k].empty())
      names[k] = "output";
    arrays[names[k]] = outputs[k];
  }
  if (ext == ".npz")
    writeNpz(config.output, arrays);
  else
    writeNpy(config.output, outputs[0]);
  llvm::outs() << "kcc: wrote " << config.output << ": ";
  for (size_t k = 0; k < numOutputs; ++k)
    llvm::outs() << (k ? ", '" : "'") << names[k] << "' "
                 << dtypeName(outputs[k].dtype())
                 << shapeToString(outputs[k].shape());
  llvm::outs() << " for " << rows << " examples of " << config.data << "\n";
  return 0;
}
