//===- KerasVariables.cpp - kcc's state in Keras's variable order ---------===//

#include "frontend/keras/KerasVariables.h"
#include "config/OptimizerSlots.h"
#include "frontend/keras/LayerSpecs.h"
#include "runtime/Error.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <functional>

using namespace kcc;
using namespace kcc::keras;

std::vector<std::string>
keras::flatLayerOrder(const std::vector<SpecLayer> &layout) {
  std::vector<std::string> order;
  llvm::StringSet<> seen;
  std::function<void(const std::vector<SpecLayer> &)> walk =
      [&](const std::vector<SpecLayer> &layers) {
        for (const SpecLayer &l : layers) {
          if (l.isModel())
            walk(l.layers);
          else if (seen.insert(l.name).second)
            order.push_back(l.name);
        }
      };
  walk(layout);
  return order;
}

std::vector<size_t>
keras::kerasTrainableOrder(Model &model, const std::vector<std::string> &order,
                           const std::string &source) {
  llvm::StringMap<std::vector<size_t>> indexOf;
  size_t t = 0;
  for (const Layer &layer : model.layers())
    for (const Weight &w : layer.impl()->weights())
      if (w.trainable)
        indexOf[layer.name()].push_back(t++);
  std::vector<size_t> perm;
  for (const std::string &name : order) {
    auto it = indexOf.find(name);
    if (it != indexOf.end())
      perm.insert(perm.end(), it->second.begin(), it->second.end());
  }
  if (perm.size() != t)
    throw Error(source + ": the layer order names " +
                std::to_string(perm.size()) + " of the model's " +
                std::to_string(t) + " trainable weights");
  return perm;
}

std::vector<size_t> keras::kerasSlotOrder(const OptimizerConfig *optimizer,
                                          const std::vector<size_t> &perm,
                                          size_t numSlots) {
  size_t n = perm.size();
  std::vector<size_t> order;
  if (!optimizer) {
    size_t perWeight = n ? numSlots / n : 0;
    for (size_t t : perm)
      for (size_t s = 0; s < perWeight; ++s)
        order.push_back(t * perWeight + s);
    return order;
  }
  size_t perWeight = slotSpecs(*optimizer).size();
  for (unsigned k : kerasStateOrder(*optimizer, n)) {
    if (k < n * perWeight)
      order.push_back(perm[k / perWeight] * perWeight + k % perWeight);
    else
      order.push_back(k);
  }
  return order;
}

namespace {

/// Keras's model.layers order, flattened (the spec's own tree when it has
/// one).
std::vector<std::string> kerasOrderOf(const ImportedModel &imported) {
  return imported.specLayers.empty() ? imported.specLayerOrder
                                     : flatLayerOrder(imported.specLayers);
}

/// For each weight in Keras's model.weights order, its index in
/// Model::parameters() order.
std::vector<size_t> weightPermutation(const ImportedModel &imported,
                                      const std::string &source) {
  Model &model = *imported.model;
  llvm::StringMap<std::pair<size_t, size_t>> range; // first, count
  size_t total = 0;
  for (const Layer &layer : model.layers()) {
    size_t n = layer.impl()->weights().size();
    range[layer.name()] = {total, n};
    total += n;
  }
  std::vector<size_t> perm;
  for (const std::string &name : kerasOrderOf(imported)) {
    auto it = range.find(name);
    if (it == range.end())
      continue;
    for (size_t i = 0; i < it->second.second; ++i)
      perm.push_back(it->second.first + i);
  }
  if (perm.size() != total)
    throw Error(source + ": Keras's layer order holds " +
                std::to_string(perm.size()) + " of the model's " +
                std::to_string(total) + " weights");
  return perm;
}

} // namespace

std::vector<NDArray>
keras::weightsToKerasOrder(const ImportedModel &imported,
                           const std::vector<NDArray> &weights) {
  std::vector<size_t> perm = weightPermutation(imported, "weights");
  if (weights.size() != perm.size())
    throw Error("weights: " + std::to_string(weights.size()) +
                " values for a model of " + std::to_string(perm.size()) +
                " weights");
  std::vector<NDArray> out;
  out.reserve(perm.size());
  for (size_t k : perm)
    out.push_back(weights[k]);
  return out;
}

std::vector<NDArray>
keras::weightsFromKerasOrder(const ImportedModel &imported,
                             const std::vector<NDArray> &values,
                             const std::string &source) {
  std::vector<size_t> perm = weightPermutation(imported, source);
  if (values.size() != perm.size())
    throw Error(source + ": " + std::to_string(values.size()) +
                " weights given for a model of " + std::to_string(perm.size()));
  // Each parameter with its layer, in Model::parameters() order.
  std::vector<std::pair<const Layer *, const Weight *>> params;
  for (const Layer &layer : imported.model->layers())
    for (const Weight &w : layer.impl()->weights())
      params.push_back({&layer, &w});
  std::vector<NDArray> out(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    auto [layer, w] = params[perm[i]];
    if (values[i].shape() != w->shape)
      throw Error(source + ": weight " + std::to_string(i) + ": " +
                  layerContext(layer->name(), layer->className()) +
                  ": weight '" + w->name + "' is " + shapeToString(w->shape) +
                  " but the value is " + shapeToString(values[i].shape()));
    out[perm[i]] =
        values[i].dtype() == w->dtype ? values[i] : values[i].to(w->dtype);
  }
  return out;
}

std::vector<NDArray>
keras::optimizerToKerasOrder(const ImportedModel &imported,
                             const OptimizerConfig &optimizer,
                             const OptimizerState &state) {
  std::vector<NDArray> out;
  out.push_back(
      NDArray::scalar(static_cast<double>(state.iterations), DType::I64));
  if (!optimizer.schedule)
    out.push_back(NDArray::scalar(state.learningRate, DType::F32));
  std::vector<size_t> perm = kerasTrainableOrder(
      *imported.model, kerasOrderOf(imported), "optimizer variables");
  for (size_t k : kerasSlotOrder(&optimizer, perm, state.slots.size()))
    out.push_back(state.slots[k]);
  return out;
}

OptimizerState keras::optimizerFromKerasOrder(
    const ImportedModel &imported, const OptimizerConfig &optimizer,
    const std::vector<NDArray> &variables, const std::string &source) {
  Model &model = *imported.model;
  size_t first = optimizer.schedule ? 1 : 2;
  std::vector<const Weight *> trainable;
  for (const Layer &layer : model.layers())
    for (const Weight &w : layer.impl()->weights())
      if (w.trainable)
        trainable.push_back(&w);
  size_t perWeight = slotSpecs(optimizer).size();
  size_t globals = globalSlotSpecs(optimizer).size();
  size_t slots = trainable.size() * perWeight + globals;
  if (variables.size() != first + slots)
    throw Error(source + ": " + std::to_string(variables.size()) +
                " optimizer variables, expected " +
                std::to_string(first + slots) + " (iterations" +
                (first == 2 ? ", learning_rate" : "") + " and " +
                std::to_string(perWeight) + " per trainable weight, " +
                std::to_string(globals) + " global)");
  auto scalarAt = [&](size_t i, const char *what) {
    if (variables[i].numel() != 1)
      throw Error(source + ": variable " + std::to_string(i) + " (" + what +
                  ") must be a scalar");
    return variables[i].toVector()[0];
  };
  OptimizerState state;
  double n = scalarAt(0, "iterations");
  if (!(n >= 0))
    throw Error(source + ": the iteration count must be >= 0");
  state.iterations = static_cast<int64_t>(n);
  state.learningRate = first == 2 ? scalarAt(1, "learning_rate")
                                  : optimizer.schedule->initialValue();
  std::vector<size_t> perm =
      kerasTrainableOrder(model, kerasOrderOf(imported), source);
  std::vector<size_t> order = kerasSlotOrder(&optimizer, perm, slots);
  state.slots.resize(slots);
  for (size_t i = 0; i < slots; ++i) {
    const NDArray &v = variables[first + i];
    size_t k = order[i];
    Shape want = k < trainable.size() * perWeight
                     ? trainable[k / perWeight]->shape
                     : Shape{};
    if (v.shape() != want)
      throw Error(source + ": variable " + std::to_string(first + i) + " is " +
                  shapeToString(v.shape()) + ", expected " +
                  shapeToString(want));
    state.slots[k] = v.dtype() == DType::F32 ? v : v.to(DType::F32);
  }
  return state;
}
