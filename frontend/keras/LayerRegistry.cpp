//===- LayerRegistry.cpp - Every Keras layer class kcc reads --------------===//
//
// The table is built once, family by family; lookups by name go through a
// string map.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/LayerRegistry.h"

#include "llvm/ADT/StringMap.h"

using namespace kcc;
using namespace kcc::keras;

const std::vector<LayerClass> &keras::layerClasses() {
  static const std::vector<LayerClass> classes = [] {
    std::vector<LayerClass> all;
    for (auto add :
         {addCoreLayers, addActivationLayers, addConvolutionalLayers,
          addPoolingLayers, addNormalizationLayers, addRegularizationLayers,
          addReshapingLayers, addMergingLayers, addRecurrentLayers,
          addAttentionLayers, addPreprocessingLayers, addApplicationLayers})
      add(all);
    return all;
  }();
  return classes;
}

const LayerClass *keras::findLayerClass(llvm::StringRef name) {
  static const llvm::StringMap<const LayerClass *> byName = [] {
    llvm::StringMap<const LayerClass *> map;
    for (const LayerClass &cls : layerClasses())
      map[cls.name] = &cls;
    return map;
  }();
  auto it = byName.find(name);
  return it == byName.end() ? nullptr : it->second;
}

std::string keras::supportedLayerList() {
  const std::vector<LayerClass> &all = layerClasses();
  std::string list;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i)
      list += i + 1 == all.size() ? " and " : ", ";
    list += all[i].name;
  }
  return list;
}

std::string keras::layerTableMarkdown() {
  std::string table = "| class | family | what kcc reads |\n|---|---|---|\n";
  for (const LayerClass &cls : layerClasses())
    table += "| `" + cls.name + "` | " + cls.family + " | " + cls.doc + " |\n";
  return table;
}

void keras::addSavedKeys(const LayerClass &cls, llvm::json::Object &config) {
  for (const std::string &key : cls.nullKeys)
    config[key] = nullptr;
  for (const auto &[key, value] : cls.fixedKeys)
    config[key] = value;
}
