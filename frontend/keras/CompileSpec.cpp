//===- CompileSpec.cpp - compile_config and training_config ---------------===//
//
// Keras records compile() as objects ({"class_name": "Adam", "config":
// {...}}) or bare names ("adam"); Keras 3 writes a loss function as
// {"class_name": "function", "config": "sparse_categorical_crossentropy"}.
// All forms land in one CompileConfig with Keras's defaults.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layer.h"
#include "frontend/keras/LayerSpecs.h"
#include "frontend/keras/ModelSpec.h"

#include <algorithm>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// The snake_case name of a serialized Keras object or a bare name, and its
/// config object if it has one.
std::string objectName(const ObjectView &parent, llvm::StringRef key,
                       std::optional<ObjectView> &config) {
  const json::Value *v = parent.get(key);
  if (std::optional<llvm::StringRef> s = v->getAsString())
    return s->str();
  ObjectView obj = ObjectView::of(parent.reader(), *v,
                                  parent.path().field(key), parent.context(),
                                  "a name or a Keras object");
  std::string cls = obj.getString("class_name");
  if (cls == "function") {
    // Keras 3: a plain loss/metric function, named by its config.
    const json::Value *c = obj.get("config");
    std::optional<llvm::StringRef> fn = c ? c->getAsString() : std::nullopt;
    if (!fn)
      obj.failField("config", "a function's config must be its name");
    return fn->str();
  }
  // tf.keras 2.11+ registers its own optimizers as "Custom>Adam".
  if (llvm::StringRef(cls).starts_with("Custom>") && !obj.has("module"))
    cls = cls.substr(7);
  checkBuiltin(obj, cls);
  if (obj.has("config"))
    config.emplace(obj.child("config"));
  return toSnakeCase(cls);
}

OptimizerConfig readOptimizer(const ObjectView &cc, llvm::StringRef key) {
  OptimizerConfig opt;
  std::optional<ObjectView> c;
  opt.name = objectName(cc, key, c);
  // toSnakeCase("SGD") is "sgd", "AdamW" gives "adam_w": Keras's string
  // names are the lower-case class names.
  opt.name.erase(std::remove(opt.name.begin(), opt.name.end(), '_'),
                 opt.name.end());
  if (!c)
    return opt;
  const char *lrKey = c->has("learning_rate") ? "learning_rate" : "lr";
  if (const json::Value *lr = c->get(lrKey)) {
    if (!lr->getAsNumber())
      c->failField(lrKey, "learning-rate schedules are not supported (a "
                          "constant learning_rate is)");
    opt.learningRate = *lr->getAsNumber();
  }
  opt.beta1 = c->getNumber("beta_1", opt.beta1);
  opt.beta2 = c->getNumber("beta_2", opt.beta2);
  opt.epsilon = c->getNumber("epsilon", opt.epsilon);
  opt.momentum = c->getNumber("momentum", opt.momentum);
  opt.rho = c->getNumber("rho", opt.rho);
  opt.nesterov = c->getBool("nesterov", false);
  opt.amsgrad = c->getBool("amsgrad", false);
  opt.weightDecay = c->getOptNumber("weight_decay");
  for (llvm::StringRef k : {"clipnorm", "global_clipnorm", "clipvalue"})
    if (c->has(k))
      c->failField(k, "gradient clipping ('" + k + "') is not supported");
  return opt;
}

void readMetrics(const ObjectView &cc, const json::Value &v,
                 const JsonPath &path, std::vector<std::string> &out) {
  if (std::optional<llvm::StringRef> s = v.getAsString()) {
    out.push_back(s->str());
    return;
  }
  if (const json::Array *a = v.getAsArray()) {
    // Per-output lists flatten: kcc models have one loss.
    for (auto [i, m] : llvm::enumerate(*a))
      readMetrics(cc, m, path.index(i), out);
    return;
  }
  ObjectView m = ObjectView::of(cc.reader(), v, path, cc.context(),
                                "a metric");
  std::string cls = m.getString("class_name");
  if (cls == "function" || cls == "__lambda__") {
    const json::Value *c = m.get("config");
    std::optional<llvm::StringRef> fn = c ? c->getAsString() : std::nullopt;
    if (!fn)
      m.failField("config", "a function's config must be its name");
    out.push_back(fn->str());
    return;
  }
  checkBuiltin(m, cls);
  out.push_back(m.has("config") ? m.child("config").getString(
                                      "name", toSnakeCase(cls))
                                : toSnakeCase(cls));
}

} // namespace

CompileConfig keras::readCompileConfig(const ObjectView &in) {
  ObjectView cc = in;
  cc.setContext("compile_config");
  CompileConfig out;
  if (cc.has("optimizer"))
    out.optimizer = readOptimizer(cc, "optimizer");
  else if (cc.has("optimizer_config"))
    out.optimizer = readOptimizer(cc, "optimizer_config");
  if (cc.has("loss")) {
    const json::Value *loss = cc.get("loss");
    if (loss->getAsArray() || (loss->getAsObject() &&
                               !loss->getAsObject()->get("class_name")))
      cc.failField("loss", "one loss per output is not supported (kcc "
                           "models have a single loss)");
    std::optional<ObjectView> c;
    out.loss = objectName(cc, "loss", c);
    if (c) {
      out.loss = c->getString("name", out.loss);
      out.fromLogits = c->getBool("from_logits", false);
      if (c->has("label_smoothing") && c->getNumber("label_smoothing") != 0)
        c->failField("label_smoothing", "label smoothing is not supported");
      if (c->has("ignore_class"))
        c->failField("ignore_class", "ignore_class is not supported");
    }
  }
  if (const json::Value *m = cc.get("metrics"))
    readMetrics(cc, *m, cc.path().field("metrics"), out.metrics);
  if (cc.has("loss_weights"))
    cc.failField("loss_weights", "loss_weights are not supported");
  return out;
}
