//===- LayerRegistry.cpp - Every Keras layer class kcc reads --------------===//
//
// The table is built once, family by family; lookups by name go through a
// string map. Classes a program registers for its own Keras layers live
// beside it, looked up after Keras's.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/LayerRegistry.h"

#include "runtime/Error.h"

#include "llvm/ADT/StringMap.h"

#include <deque>
#include <mutex>

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

namespace {

/// The classes registerLayerClass added (a deque: entries never move).
struct UserClasses {
  std::mutex mutex;
  std::deque<LayerClass> classes;
  llvm::StringMap<const LayerClass *> byRegisteredName, byClassName;
};

UserClasses &userClasses() {
  static UserClasses user;
  return user;
}

} // namespace

void keras::registerLayerClass(LayerClass cls) {
  if (!cls.registeredName || cls.registeredName->empty() || cls.name.empty() ||
      !cls.read)
    throw Error("registerLayerClass: a layer class needs its Keras class "
                "name, its registered name and a reader");
  UserClasses &user = userClasses();
  std::lock_guard<std::mutex> lock(user.mutex);
  if (user.byRegisteredName.count(*cls.registeredName))
    throw Error("registerLayerClass: '" + *cls.registeredName +
                "' is already registered");
  if (cls.family.empty())
    cls.family = "custom";
  const LayerClass &added = user.classes.emplace_back(std::move(cls));
  user.byRegisteredName[*added.registeredName] = &added;
  user.byClassName.try_emplace(added.name, &added);
}

const LayerClass *
keras::findRegisteredLayerClass(llvm::StringRef registeredName) {
  UserClasses &user = userClasses();
  std::lock_guard<std::mutex> lock(user.mutex);
  auto it = user.byRegisteredName.find(registeredName);
  return it == user.byRegisteredName.end() ? nullptr : it->second;
}

const LayerClass *keras::findLayerClass(llvm::StringRef name) {
  static const llvm::StringMap<const LayerClass *> byName = [] {
    llvm::StringMap<const LayerClass *> map;
    for (const LayerClass &cls : layerClasses())
      map[cls.name] = &cls;
    return map;
  }();
  auto it = byName.find(name);
  if (it != byName.end())
    return it->second;
  if (const LayerClass *registered = findRegisteredLayerClass(name))
    return registered;
  UserClasses &user = userClasses();
  std::lock_guard<std::mutex> lock(user.mutex);
  auto byClass = user.byClassName.find(name);
  return byClass == user.byClassName.end() ? nullptr : byClass->second;
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
  for (const std::string &key : cls.omittedKeys)
    config.erase(key);
}
