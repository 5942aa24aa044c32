//===- Saving.cpp - .keras archives and weight files out, checkpoints in --===//
//
// The archive is assembled in memory -- config.json, metadata.json, the
// model.weights.h5 image from Hdf5Writer -- and only then written, through
// writeFileAtomically and ZipWriter, so nothing reaches the destination
// until every part exists. Reading back reuses the importer for the model
// and its weights and adds the optimizer variables and kcc's metadata.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/Saving.h"
#include "config/OptimizerSlots.h"
#include "frontend/keras/Hdf5.h"
#include "frontend/keras/Hdf5Writer.h"
#include "frontend/keras/KerasVariables.h"
#include "frontend/keras/LayerSpecs.h"
#include "frontend/keras/ModelSpec.h"
#include "frontend/keras/PythonJson.h"
#include "runtime/data/AtomicFile.h"
#include "runtime/data/ZipWriter.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

#include <cmath>
#include <ctime>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// The Keras release whose file format kcc writes.
constexpr const char *kKerasVersion = "3.15.1";

std::string nowString() {
  std::time_t t = std::time(nullptr);
  std::tm tm;
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d@%H:%M:%S", &tm);
  return buf;
}

std::string metadataJson(Model &model, const ModelState &state) {
  // The model's seed picks Dropout's streams (seed=None): a resumed run
  // must draw the masks the uninterrupted one would.
  json::Object kcc{{"epoch", state.epoch},
                   {"seed", std::to_string(model.seed())}};
  if (state.optimizer)
    kcc["iterations"] = state.optimizer->iterations;
  return pythonJson(json::Value(json::Object{{"keras_version", kKerasVersion},
                                             {"date_saved", nowString()},
                                             {"kcc", std::move(kcc)}}));
}

/// Fails unless `state` fits `model`: one array per weight, each of the
/// weight's shape and dtype; slots per trainable weight likewise.
void checkState(Model &model, const ModelState &state,
                const OptimizerConfig *optimizer, const std::string &source) {
  std::vector<Parameter> params = model.parameters();
  if (state.weights.size() != params.size())
    throw Error(source + ": " + std::to_string(state.weights.size()) +
                " weight arrays for a model with " +
                std::to_string(params.size()) + " weights");
  std::vector<const Parameter *> trainable;
  for (size_t i = 0; i < params.size(); ++i) {
    const NDArray &w = state.weights[i];
    if (w.shape() != params[i].value.shape() ||
        w.dtype() != params[i].value.dtype())
      throw Error(source + ": weight '" + params[i].name + "' is " +
                  shapeToString(params[i].value.shape()) + " but the array " +
                  "to save is " + shapeToString(w.shape()));
    if (params[i].trainable)
      trainable.push_back(&params[i]);
  }
  if (!state.optimizer)
    return;
  const std::vector<NDArray> &slots = state.optimizer->slots;
  // Optimizer-wide slots (Nadam's u_product) follow the per-weight ones.
  size_t globals = optimizer ? globalSlotSpecs(*optimizer).size() : 0;
  size_t perWeightSlots = slots.size() < globals ? 1 : slots.size() - globals;
  if (trainable.empty() ? perWeightSlots != 0
                        : perWeightSlots % trainable.size())
    throw Error(source + ": " + std::to_string(slots.size()) +
                " optimizer slots for " + std::to_string(trainable.size()) +
                " trainable weights");
  size_t perWeight = trainable.empty() ? 0 : perWeightSlots / trainable.size();
  for (size_t i = 0; i < perWeightSlots; ++i) {
    const Parameter &p = *trainable[i / perWeight];
    if (slots[i].shape() != p.value.shape())
      throw Error(source + ": optimizer slot " + std::to_string(i) + " of '" +
                  p.name + "' is " + shapeToString(slots[i].shape()) +
                  ", the weight " + shapeToString(p.value.shape()));
  }
}

/// The layers Keras numbers `imported`'s weight groups by: the spec's own
/// (nested models included) for a Keras 3 config kcc keeps, else the order
/// of the config kcc writes.
std::vector<SpecLayer> layerLayoutOf(const ImportedModel &imported) {
  bool keepText =
      imported.kerasMajorVersion >= 3 && !imported.configJson.empty();
  if (!keepText)
    return {};
  if (!imported.specLayers.empty())
    return imported.specLayers;
  std::vector<SpecLayer> layout;
  for (const std::string &name : imported.specLayerOrder)
    layout.push_back({name, imported.model->getLayer(name).className(), {}});
  return layout;
}

std::string optimizerNameOf(const std::optional<TrainingConfig> &training);

/// Writes the weights of `layers` (one model level: "layers", or a nested
/// model's ".../layers") in Keras 3's layout; a layer shared by several
/// levels is written at its first place only, as Keras does.
class LayoutWriter {
public:
  LayoutWriter(Hdf5Writer &h5, Model &model, const ModelState &state,
               const std::string &source)
      : h5_(h5), state_(state), source_(source) {
    size_t offset = 0;
    for (const Layer &layer : model.layers()) {
      firstWeight_[layer.name()] = offset;
      byName_.try_emplace(layer.name(), layer);
      offset += layer.impl()->weights().size();
    }
  }

  /// "<base>/<snake_case class>[_N]/vars", created with its name.
  std::string group(const std::string &base, llvm::StringMap<int> &counters,
                    const std::string &cls, const std::string &name) {
    std::string snake = namePrefix(cls);
    int n = counters[snake]++;
    std::string vars = base + "/" +
                       (n == 0 ? snake : snake + "_" + std::to_string(n)) +
                       "/vars";
    h5_.createGroup(vars);
    h5_.setStringAttr(vars, "name", name);
    return vars;
  }

  void writeLevel(const std::string &base, llvm::StringMap<int> &counters,
                  const std::vector<SpecLayer> &layers) {
    for (const SpecLayer &l : layers) {
      std::string vars = group(base, counters, l.className, l.name);
      std::string layerGroup = vars.substr(0, vars.size() - 5);
      if (l.isModel()) {
        llvm::StringMap<int> inner;
        h5_.createGroup(layerGroup + "/layers");
        writeLevel(layerGroup + "/layers", inner, l.layers);
        continue;
      }
      if (!l.built || !written_.insert(l.name).second)
        continue;
      writeLayer(l.name, vars, layerGroup);
    }
  }

private:
  void writeLayer(const std::string &name, const std::string &vars,
                  const std::string &layerGroup) {
    auto it = byName_.find(name);
    if (it == byName_.end())
      throw Error(source_ + ": no layer '" + name + "' in the model");
    const Layer &layer = it->second;
    size_t first = firstWeight_.lookup(name);
    // Weights of sublayers ("query/kernel", "cell/kernel") go to the
    // sublayer's group, numbered per sublayer, as Keras writes
    // MultiHeadAttention and recurrent cells.
    llvm::StringMap<size_t> perSublayer;
    const std::vector<Weight> &ws = layer.impl()->weights();
    for (size_t i = 0; i < ws.size(); ++i) {
      size_t slash = ws[i].name.rfind('/');
      if (slash == std::string::npos) {
        h5_.writeDataset(vars + "/" + std::to_string(i),
                         state_.weights[first + i]);
        continue;
      }
      std::string sub = ws[i].name.substr(0, slash);
      std::string subVars =
          layerGroup + "/" + sublayerGroup(layer.className(), sub) + "/vars";
      size_t &n = perSublayer[sub];
      if (n == 0) {
        h5_.createGroup(subVars);
        h5_.setStringAttr(subVars, "name", sub);
      }
      h5_.writeDataset(subVars + "/" + std::to_string(n++),
                       state_.weights[first + i]);
    }
  }

  Hdf5Writer &h5_;
  const ModelState &state_;
  const std::string &source_;
  llvm::StringMap<size_t> firstWeight_;
  llvm::StringMap<Layer> byName_;
  llvm::StringSet<> written_;
};

/// model.weights.h5 in Keras 3's layout. `layout`: Keras's model.layers
/// (nested models with their own), empty for the model's own order.
std::string weightsImage(Model &model, const ModelState &state,
                         std::vector<SpecLayer> layout,
                         const std::optional<TrainingConfig> &training,
                         const std::string &source) {
  const OptimizerConfig *optimizer = training ? &training->optimizer : nullptr;
  std::string optimizerName = optimizerNameOf(training);
  checkState(model, state, optimizer, source);
  if (layout.empty())
    for (const std::string &name : kerasLayerOrder(model)) {
      Layer layer = model.getLayer(name);
      layout.push_back({name, layer.className(), {}});
    }
  Hdf5Writer h5(source);
  h5.createGroup("layers");
  LayoutWriter writer(h5, model, state, source);
  llvm::StringMap<int> counters;
  // Functional models list their InputLayers in model.layers, first.
  if (!dynamic_cast<Sequential *>(&model))
    for (const std::string &name : inputLayerNames(model))
      writer.group("layers", counters, "InputLayer", name);
  writer.writeLevel("layers", counters, layout);
  std::vector<std::string> order = flatLayerOrder(layout);
  if (const std::optional<OptimizerState> &opt = state.optimizer) {
    h5.createGroup("optimizer/vars");
    h5.setStringAttr("optimizer/vars", "name", optimizerName);
    h5.writeDataset(
        "optimizer/vars/0",
        NDArray::scalar(static_cast<double>(opt->iterations), DType::I64));
    // Keras has no learning_rate variable under a schedule.
    size_t next = 1;
    if (!optimizer || !optimizer->schedule)
      h5.writeDataset("optimizer/vars/" + std::to_string(next++),
                      NDArray::scalar(opt->learningRate, DType::F32));
    // kcc's slots follow Model::parameters(), Keras's its model.layers.
    std::vector<size_t> perm = kerasTrainableOrder(model, order, source);
    for (size_t k : kerasSlotOrder(optimizer, perm, opt->slots.size()))
      h5.writeDataset("optimizer/vars/" + std::to_string(next++),
                      opt->slots[k]);
  }
  h5.createGroup("vars");
  h5.setStringAttr("vars", "name", model.name());
  return h5.image();
}

std::string optimizerNameOf(const std::optional<TrainingConfig> &training) {
  return training ? optimizerName(training->optimizer.kind).str()
                  : std::string("optimizer");
}

void writeArchive(const std::string &path, std::string config,
                  std::string metadata, std::string weights) {
  writeFileAtomically(path, [&](const std::string &tmp) {
    ZipWriter zip(tmp, path);
    zip.add("metadata.json", std::move(metadata));
    zip.add("config.json", std::move(config));
    zip.add("model.weights.h5", std::move(weights));
    zip.close();
  });
}

/// Whether two configurations compile the same step: what compile_config
/// records, every optimizer, schedule and clipping field included (the
/// serialization is the comparison, so nothing it writes is missed).
bool sameCompile(const TrainingConfig &a, const TrainingConfig &b) {
  return json::Value(compileConfigJson(a)) == json::Value(compileConfigJson(b));
}

/// The imported Keras 3 config text with compile_config replaced when
/// `training` compiles differently from what the source recorded.
std::string updatedConfig(const ImportedModel &imported,
                          const std::optional<TrainingConfig> &training,
                          const std::string &source) {
  if (!training ||
      (imported.training && sameCompile(*imported.training, *training)))
    return imported.configJson;
  json::Value spec = parseJson(imported.configJson, source);
  json::Object *top = spec.getAsObject();
  if (!top)
    throw Error(source + ": the model's config is not a JSON object");
  (*top)["compile_config"] = compileConfigJson(*training);
  return pythonJson(spec);
}

} // namespace

void keras::saveKerasArchive(const std::string &path, Model &model,
                             const ModelState &state,
                             const std::optional<TrainingConfig> &training) {
  std::string config = kerasConfigJson(model, training);
  std::string weights =
      weightsImage(model, state, {}, training, path + ":model.weights.h5");
  writeArchive(path, std::move(config), metadataJson(model, state),
               std::move(weights));
}

void keras::saveKerasArchive(const std::string &path,
                             const ImportedModel &imported,
                             const ModelState &state,
                             const std::optional<TrainingConfig> &training) {
  std::optional<TrainingConfig> effective =
      training ? training : imported.training;
  Model &model = *imported.model;
  bool keepText =
      imported.kerasMajorVersion >= 3 && !imported.configJson.empty();
  std::string config = keepText ? updatedConfig(imported, effective, path)
                                : kerasConfigJson(model, effective);
  std::string weights = weightsImage(model, state, layerLayoutOf(imported),
                                     effective, path + ":model.weights.h5");
  writeArchive(path, std::move(config), metadataJson(model, state),
               std::move(weights));
}

void keras::saveWeightsH5(const std::string &path, Model &model,
                          const ModelState &state) {
  writeFileAtomically(path, weightsImage(model, state, {}, std::nullopt, path));
}

void keras::saveWeightsH5(const std::string &path,
                          const ImportedModel &imported,
                          const ModelState &state) {
  writeFileAtomically(path, weightsImage(*imported.model, state,
                                         layerLayoutOf(imported),
                                         imported.training, path));
}

Checkpoint keras::loadCheckpoint(const std::string &path,
                                 std::optional<uint64_t> seed) {
  Checkpoint ckpt;
  ckpt.source = path;
  std::optional<int64_t> iterations;
  if (std::optional<std::string> meta =
          readArchiveMember(path, "metadata.json", kMaxJsonBytes)) {
    std::string name = path + ":metadata.json";
    json::Value v = parseJson(*meta, name);
    const json::Object *o = v.getAsObject();
    const json::Object *kcc = o ? o->getObject("kcc") : nullptr;
    if (kcc) {
      std::optional<int64_t> epoch = kcc->getInteger("epoch");
      if (!epoch || *epoch < 0)
        throw Error(name + ": $.kcc.epoch must be a non-negative integer");
      ckpt.epoch = *epoch;
      iterations = kcc->getInteger("iterations");
      // A string: JSON numbers lose 64-bit integers.
      std::optional<llvm::StringRef> saved = kcc->getString("seed");
      uint64_t value = 0;
      if (saved && !seed) {
        if (saved->getAsInteger(10, value))
          throw Error(name + ": $.kcc.seed must be a decimal integer");
        seed = value;
      }
    }
  }
  ckpt.imported = importKerasArchive(path, seed.value_or(0));
  std::optional<std::string> image =
      readArchiveMember(path, "model.weights.h5");
  if (!image)
    return ckpt;
  std::string source = path + ":model.weights.h5";
  Hdf5File h5(*image, source);
  if (!h5.isGroup("optimizer/vars"))
    return ckpt;
  size_t count = 0;
  while (h5.exists("optimizer/vars/" + std::to_string(count)))
    ++count;
  // iteration, learning_rate (none under a schedule), then the slots.
  const OptimizerConfig *optimizer =
      ckpt.imported.training ? &ckpt.imported.training->optimizer : nullptr;
  size_t first = optimizer && optimizer->schedule ? 1 : 2;
  if (count < first)
    return ckpt; // Built but never used: nothing to resume.
  // The step count: kcc's metadata ("kcc": {"iterations": N}), else (an
  // archive Keras wrote after fit) Keras's own `iterations` variable.
  if (!iterations) {
    NDArray counter = h5.readFloat("optimizer/vars/0");
    if (counter.numel() != 1)
      h5.fail("optimizer/vars/0", "the iteration count must be a scalar");
    double n = counter.toVector()[0];
    if (!(n >= 0) || n != std::floor(n))
      h5.fail("optimizer/vars/0", "the iteration count must be a "
                                  "non-negative integer, found " +
                                      std::to_string(n));
    iterations = static_cast<int64_t>(n);
  }
  // Built but never stepped (Keras saves a compiled model's iteration 0
  // and learning rate): nothing to resume.
  if (*iterations <= 0 && count == first)
    return ckpt;
  if (*iterations < 0)
    return ckpt;
  OptimizerState opt;
  opt.iterations = *iterations;
  if (first == 1) {
    // No learning_rate variable: the schedule computes it in the step.
    opt.learningRate = optimizer->schedule->initialValue();
  } else {
    NDArray lr = h5.readFloat("optimizer/vars/1");
    if (lr.numel() != 1)
      h5.fail("optimizer/vars/1", "the learning rate must be a scalar");
    opt.learningRate = lr.toVector()[0];
  }
  // The file holds the slots in Keras's order (its config's layer order);
  // the Executable wants Model::parameters() order.
  Model &model = *ckpt.imported.model;
  std::vector<const Weight *> trainable;
  for (const Layer &layer : model.layers())
    for (const Weight &w : layer.impl()->weights())
      if (w.trainable)
        trainable.push_back(&w);
  std::vector<size_t> perm =
      kerasTrainableOrder(model, ckpt.imported.specLayerOrder, source);
  size_t slots = count - first;
  size_t globals = optimizer ? globalSlotSpecs(*optimizer).size() : 0;
  size_t perWeight = optimizer
                         ? slotSpecs(*optimizer).size()
                         : (trainable.empty() ? 0 : slots / trainable.size());
  if (slots != trainable.size() * perWeight + globals)
    h5.fail("optimizer/vars",
            std::to_string(slots) + " optimizer slots for a model with " +
                std::to_string(trainable.size()) + " trainable weights" +
                (optimizer
                     ? " and " + optimizerNameOf(ckpt.imported.training) +
                           " (" + std::to_string(perWeight) + " per weight, " +
                           std::to_string(globals) + " global)"
                     : std::string()));
  std::vector<size_t> order = kerasSlotOrder(optimizer, perm, slots);
  opt.slots.resize(slots);
  for (size_t i = 0; i < slots; ++i) {
    std::string at = "optimizer/vars/" + std::to_string(i + first);
    size_t k = order[i];
    Shape shape = h5.datasetShape(at);
    if (k < trainable.size() * perWeight) {
      const Weight &w = *trainable[k / perWeight];
      if (shape != w.shape)
        h5.fail(at, "a slot of weight '" + w.name + "' " +
                        shapeToString(w.shape) + " is " + shapeToString(shape));
    } else if (!shape.empty()) {
      h5.fail(at, "an optimizer-wide slot must be a scalar, found " +
                      shapeToString(shape));
    }
    opt.slots[k] = h5.readFloat(at);
  }
  ckpt.optimizer = std::move(opt);
  return ckpt;
}
