//===- Preprocessing.cpp - Keras's preprocessing layers -------------------===//
//
// Rescaling (keras/src/layers/preprocessing/): preprocessing that is part
// of the model, traced into the step like any other layer.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// Rescaling's scale or offset: a number, a list of numbers, or the list
/// as Keras serializes a tuple ({"class_name": "__tuple__", "config":
/// {"value": [...]}}).
std::vector<double> readScalarOrList(const ObjectView &c, llvm::StringRef key,
                                     std::optional<double> dflt) {
  const json::Value *v = c.get(key);
  if (!v) {
    if (!dflt)
      c.failField(key, "missing required field '" + key + "'");
    return {*dflt};
  }
  const json::Value *list = v;
  if (const json::Object *o = v->getAsObject()) {
    const json::Object *config = o->getObject("config");
    list = config ? config->get("value") : nullptr;
    if (o->getString("class_name") != llvm::StringRef("__tuple__") || !list)
      c.failField(key, "'" + key + "' must be a number or a list of numbers");
  }
  std::vector<double> values;
  if (std::optional<double> one = list->getAsNumber()) {
    values.push_back(*one);
  } else if (const json::Array *a = list->getAsArray()) {
    for (const json::Value &e : *a) {
      std::optional<double> n = e.getAsNumber();
      if (!n)
        c.failField(key, "'" + key + "' must hold numbers only");
      values.push_back(*n);
    }
  }
  if (values.empty())
    c.failField(key, "'" + key + "' must be a number or a list of numbers");
  for (double x : values)
    if (!std::isfinite(x))
      c.failField(key, "'" + key + "' must be finite");
  return values;
}

} // namespace

void keras::addPreprocessingLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"Rescaling",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(
                           Rescaling(readScalarOrList(c, "scale", std::nullopt),
                                     readScalarOrList(c, "offset", 0.0)));
                     },
                     {},
                     {},
                     "`scale`, `offset`: a number or one per channel"});
}
