//===- Weights.cpp - Keras weight files into an imported model ------------===//
//
// Two layouts:
//  - Keras 3 (model.weights.h5 in a .keras archive): layers/<group>/vars/<i>.
//    Groups are named by class and counter in model.layers order (dense,
//    dense_1, ..., never by layer name, which may be auto-generated); recent
//    Keras also stores the layer name as the "name" attribute of vars/,
//    which is preferred when present. A nested model's layers are a level
//    of their own: layers/functional/layers/dense/vars/<i>.
//  - Keras 2 (legacy .h5, model_weights/ or the root of a weights file):
//    layer_names lists the layers, each group's weight_names its datasets;
//    a nested model's group holds all its layers' weights, named by layer.
// Keras and kcc declare a layer's weights in the same order with the same
// shapes (Dense kernel [in, units]; Conv2D kernel HWIO), so values are
// copied as they are once every shape has been checked.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/Hdf5.h"
#include "frontend/keras/KerasImporter.h"
#include "frontend/keras/LayerSpecs.h"
#include "frontend/keras/ModelSpec.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace kcc;
using namespace kcc::keras;

namespace {

/// Checks and reads the datasets `paths` as the weights of `layer`.
void assign(const Hdf5File &file, const Layer &layer,
            const std::vector<std::string> &paths, const std::string &where) {
  std::vector<Weight> &ws = layer.impl()->weights();
  std::string ctx = layerContext(layer.name(), layer.className());
  if (paths.size() != ws.size())
    file.fail(where, ctx + ": the file has " + std::to_string(paths.size()) +
                         " weight(s), the layer " + std::to_string(ws.size()));
  std::vector<NDArray> values;
  for (size_t i = 0; i < ws.size(); ++i) {
    // Shapes first: a corrupt file must not make us allocate its sizes.
    Shape shape = file.datasetShape(paths[i]);
    if (shape != ws[i].shape)
      file.fail(paths[i], ctx + ": weight '" + ws[i].name + "' is " +
                              shapeToString(ws[i].shape) +
                              " but the file has " + shapeToString(shape));
    values.push_back(file.readFloat(paths[i]));
  }
  layer.setWeights(values);
}

/// The datasets of a layer whose weights belong to sublayers
/// ("query/kernel": MultiHeadAttention's EinsumDenses; "cell/kernel" and
/// "forward_layer/cell/kernel": recurrent cells), in the layer's
/// order: SUBGROUP/vars/<i>, SUBGROUP the member of the layer's group whose
/// vars/ "name" attribute is the sublayer (else sublayerGroup's name), <i>
/// counting that sublayer's weights. Empty for a layer without them.
std::vector<std::string> sublayerPaths(const Hdf5File &file, const Layer &layer,
                                       const std::string &base) {
  std::vector<std::string> paths;
  llvm::StringMap<std::string> byName;
  llvm::StringMap<size_t> counts;
  for (const Weight &w : layer.impl()->weights()) {
    size_t slash = w.name.rfind('/');
    if (slash == std::string::npos)
      return {};
    std::string sub = w.name.substr(0, slash);
    if (byName.empty() && file.isGroup(base))
      for (const std::string &m : file.members(base))
        if (std::optional<std::string> n =
                file.stringAttr(base + "/" + m + "/vars", "name"))
          byName[*n] = m;
    std::string member = byName.lookup(sub);
    if (member.empty())
      member = keras::sublayerGroup(layer.className(), sub);
    paths.push_back(base + "/" + member + "/vars/" +
                    std::to_string(counts[sub]++));
  }
  for (const auto &kv : counts) {
    std::string member = byName.lookup(kv.first());
    std::string vars =
        base + "/" +
        (member.empty() ? keras::sublayerGroup(layer.className(), kv.first())
                        : member) +
        "/vars";
    if (file.exists(vars + "/" + std::to_string(kv.second)))
      file.fail(vars, layerContext(layer.name(), layer.className()) +
                          ": the file has more than the " +
                          std::to_string(kv.second) + " weight(s) of '" +
                          kv.first().str() + "'");
  }
  return paths;
}

/// The group of each layer of `layers` under `base` ("layers", or a nested
/// model's ".../layers"): the vars/ "name" attribute, else the class
/// counter Keras numbers groups by (over model.layers of that level).
std::vector<std::string> levelGroups(const Hdf5File &file,
                                     const std::string &base,
                                     const std::vector<SpecLayer> &layers) {
  llvm::StringMap<std::string> byName;
  if (file.isGroup(base))
    for (const std::string &g : file.members(base))
      if (std::optional<std::string> n =
              file.stringAttr(base + "/" + g + "/vars", "name"))
        byName[*n] = g;
  llvm::StringMap<int> counters;
  std::vector<std::string> groups;
  for (const SpecLayer &l : layers) {
    std::string cls = namePrefix(l.className);
    int n = counters[cls]++;
    std::string group = n == 0 ? cls : cls + "_" + std::to_string(n);
    auto it = byName.find(l.name);
    groups.push_back(it != byName.end() ? it->second : group);
  }
  return groups;
}

/// Loads the layers of one model level (a nested model's recursively);
/// `loaded` collects the layers done (a shared layer is stored once, at its
/// first place).
void loadLevel(const Hdf5File &file, Model &model, const std::string &base,
               const std::vector<SpecLayer> &layers,
               llvm::StringMap<bool> &loaded) {
  std::vector<std::string> groups = levelGroups(file, base, layers);
  for (auto [l, group] : llvm::zip(layers, groups)) {
    std::string path = base + "/" + group;
    if (l.isModel()) {
      loadLevel(file, model, path + "/layers", l.layers, loaded);
      continue;
    }
    if (loaded.count(l.name) || !l.built)
      continue;
    Layer layer = model.getLayer(l.name);
    if (layer.impl()->weights().empty() || !file.isGroup(path))
      continue;
    std::string vars = path + "/vars";
    std::vector<std::string> paths = sublayerPaths(file, layer, path);
    if (paths.empty() && file.isGroup(vars))
      for (size_t i = 0; file.exists(vars + "/" + std::to_string(i)); ++i)
        paths.push_back(vars + "/" + std::to_string(i));
    assign(file, layer, paths, vars);
    loaded[l.name] = true;
  }
}

void loadKeras3(const Hdf5File &file, ImportedModel &imported) {
  Model &model = *imported.model;
  // Without the spec's tree (a model put together in C++), its layers in
  // specLayerOrder are one level.
  std::vector<SpecLayer> layout = imported.specLayers;
  if (layout.empty())
    for (const std::string &name : imported.specLayerOrder)
      layout.push_back({name, model.getLayer(name).className(), {}});
  llvm::StringMap<bool> loaded;
  loadLevel(file, model, "layers", layout, loaded);
  for (const Layer &layer : model.layers())
    if (!layer.impl()->weights().empty() && !loaded.count(layer.name()))
      file.fail("layers", layerContext(layer.name(), layer.className()) +
                              ": no weights for this layer in the file");
}

/// The nested model named `name` anywhere in `layers`, or null.
const SpecLayer *findNestedModel(const std::vector<SpecLayer> &layers,
                                 llvm::StringRef name) {
  for (const SpecLayer &l : layers) {
    if (!l.isModel())
      continue;
    if (l.name == name)
      return &l;
    if (const SpecLayer *inner = findNestedModel(l.layers, name))
      return inner;
  }
  return nullptr;
}

/// A nested model's group in a legacy .h5 lists the weights of all its
/// layers, named ".../<layer>/<weight>[:0]" (Keras 3 writes a path, tf.keras
/// the weight's name): each dataset goes to the layer named by the first
/// segment that is a layer of the model and has the rest as a weight.
void loadNestedKeras2(const Hdf5File &file, const std::string &group,
                      const std::vector<std::string> &weightNames, Model &model,
                      llvm::StringMap<bool> &seen) {
  llvm::StringMap<std::vector<std::pair<size_t, std::string>>> perLayer;
  for (const std::string &w : weightNames) {
    llvm::StringRef name(w);
    name.consume_back(":0");
    llvm::SmallVector<llvm::StringRef> parts;
    name.split(parts, '/');
    bool placed = false;
    for (size_t i = 0; i + 1 < parts.size() && !placed; ++i) {
      std::optional<Layer> layer;
      try {
        layer = model.getLayer(parts[i].str());
      } catch (const Error &) {
        continue;
      }
      std::string weight =
          llvm::join(llvm::ArrayRef(parts).drop_front(i + 1), "/");
      const std::vector<Weight> &ws = layer->impl()->weights();
      for (size_t k = 0; k < ws.size(); ++k)
        if (ws[k].name == weight) {
          perLayer[layer->name()].push_back({k, group + "/" + w});
          placed = true;
        }
    }
    if (!placed)
      file.fail(group + "/" + w, "weight '" + w +
                                     "' names no weight of a layer in the "
                                     "model");
  }
  for (auto &entry : perLayer) {
    Layer layer = model.getLayer(entry.first().str());
    std::vector<std::string> paths(layer.impl()->weights().size());
    for (const auto &[k, path] : entry.second)
      paths[k] = path;
    for (const std::string &p : paths)
      if (p.empty())
        file.fail(group, layerContext(layer.name(), layer.className()) +
                             ": the file lacks some of its weights");
    assign(file, layer, paths, group);
    seen[layer.name()] = true;
  }
}

void loadKeras2(const Hdf5File &file, const std::string &root,
                const ImportedModel &imported) {
  Model &model = *imported.model;
  std::vector<std::string> names = *file.stringListAttr(root, "layer_names");
  llvm::StringMap<bool> seen;
  for (const std::string &name : names) {
    std::string group = (root == "/" ? "" : root + "/") + name;
    std::vector<std::string> weightNames =
        file.stringListAttr(group, "weight_names")
            .value_or(std::vector<std::string>{});
    if (weightNames.empty())
      continue;
    if (findNestedModel(imported.specLayers, name)) {
      loadNestedKeras2(file, group, weightNames, model, seen);
      continue;
    }
    Layer layer = [&] {
      try {
        return model.getLayer(name);
      } catch (const Error &) {
        file.fail(group, "weights for layer '" + name +
                             "', which is not in the model");
      }
    }();
    std::vector<std::string> paths;
    for (const std::string &w : weightNames)
      paths.push_back(group + "/" + w);
    assign(file, layer, paths, group);
    seen[name] = true;
  }
  for (const Layer &layer : model.layers())
    if (!layer.impl()->weights().empty() && !seen.count(layer.name()))
      file.fail(root, layerContext(layer.name(), layer.className()) +
                          ": no weights for this layer in the file");
}

} // namespace

void keras::loadWeightsH5(ImportedModel &imported, llvm::StringRef image,
                          llvm::StringRef sourceName) {
  loadWeightsFromHdf5(Hdf5File(image, sourceName.str()), imported);
}

void keras::loadWeightsFromHdf5(const Hdf5File &file, ImportedModel &imported) {
  if (file.isGroup("layers"))
    loadKeras3(file, imported);
  else if (file.stringListAttr("model_weights", "layer_names"))
    loadKeras2(file, "model_weights", imported);
  else if (file.stringListAttr("/", "layer_names"))
    loadKeras2(file, "/", imported);
  else
    file.fail("", "no Keras weights (neither layers/ nor layer_names)");
  imported.weightsLoaded = true;
}

void keras::loadWeightsH5File(ImportedModel &imported,
                              const std::string &path) {
  std::unique_ptr<llvm::MemoryBuffer> buf = readModelFile(path);
  loadWeightsH5(imported, buf->getBuffer(), path);
}
