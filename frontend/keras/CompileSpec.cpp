//===- CompileSpec.cpp - compile_config and training_config ---------------===//
//
// Keras records compile() as objects ({"class_name": "Adam", "config":
// {...}}) or bare names ("adam"); Keras 3 writes a loss function as
// {"class_name": "function", "config": "sparse_categorical_crossentropy"}.
// All forms land in one TrainingConfig with Keras's defaults. A name kcc
// cannot train with is kept as a deferred error, not thrown: the model can
// still be compiled for inference.
//
//===----------------------------------------------------------------------===//

#include "frontend/Layer.h"
#include "frontend/keras/LayerSpecs.h"
#include "frontend/keras/ModelSpec.h"

#include <algorithm>
#include <cstdio>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

namespace {

/// The snake_case name of a serialized Keras object or a bare name, and its
/// config object if it has one.
std::string objectName(const ObjectView &parent, const json::Value *v,
                       const JsonPath &path,
                       std::optional<ObjectView> &config) {
  if (std::optional<llvm::StringRef> s = v->getAsString())
    return s->str();
  ObjectView obj = ObjectView::of(parent.reader(), *v, path, parent.context(),
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

std::string objectName(const ObjectView &parent, llvm::StringRef key,
                       std::optional<ObjectView> &config) {
  return objectName(parent, parent.get(key), parent.path().field(key), config);
}

/// The registered name of a loss or metric that is Python code rather than
/// one of Keras's: a registered function (Keras 3 writes {"class_name":
/// "function", "config": "MyPackage>my_loss"}), or a class from a module
/// other than keras's ({"module": null, "class_name": "MyLoss",
/// "registered_name": "MyLoss"}). Nothing for bare names and Keras's own.
std::optional<std::string> customObjectName(const json::Value &v) {
  const json::Object *o = v.getAsObject();
  std::optional<llvm::StringRef> cls =
      o ? o->getString("class_name") : std::nullopt;
  if (!cls)
    return std::nullopt;
  if (*cls == "function" || *cls == "__lambda__") {
    std::optional<llvm::StringRef> fn = o->getString("config");
    if (*cls == "__lambda__")
      return fn ? fn->str() : std::string("<lambda>");
    if (fn && fn->contains('>'))
      return fn->str();
    return std::nullopt;
  }
  std::optional<llvm::StringRef> reg = o->getString("registered_name");
  const json::Value *module = o->get("module");
  std::optional<llvm::StringRef> m =
      module ? module->getAsString() : std::nullopt;
  bool kerasModule = m && (*m == "keras" || m->starts_with("keras."));
  // tf.keras writes no module; its registered_name of a built-in is the
  // class name (or null).
  if ((module && !kerasModule) || (reg && *reg != *cls))
    return (reg ? *reg : *cls).str();
  return std::nullopt;
}

/// The error for a custom loss or metric: kcc cannot run Python.
std::string customObjectError(llvm::StringRef what, llvm::StringRef name,
                              llvm::StringRef replacement) {
  return ("custom " + what + " '" + name +
          "' is Python code, which kcc cannot run; " + replacement)
      .str();
}

/// Keeps the first error: the one a user fixes first.
void deferErrorAt(const ObjectView &view, const JsonPath &path, llvm::Error err,
                  std::string &error) {
  std::string msg = llvm::toString(std::move(err));
  if (error.empty())
    error = view.reader().message(path, view.context(), msg);
}

void deferError(const ObjectView &view, llvm::StringRef key, llvm::Error err,
                std::string &error) {
  deferErrorAt(view, view.path().field(key), std::move(err), error);
}

llvm::Error unsupported(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

/// A list of numbers (a schedule's boundaries and values).
std::vector<double> readNumbers(const ObjectView &c, llvm::StringRef key) {
  const json::Value *v = c.get(key);
  const json::Array *a = v ? v->getAsArray() : nullptr;
  if (!a)
    c.failField(key, "expects a list of numbers");
  std::vector<double> out;
  for (const json::Value &x : *a) {
    std::optional<double> n = x.getAsNumber();
    if (!n)
      c.failField(key, "expects a list of numbers");
    out.push_back(*n);
  }
  return out;
}

/// A serialized keras.optimizers.schedules object (Keras 3 writes `module`
/// "keras.optimizers.schedules" and a null `registered_name`; tf.keras just
/// class_name and config). An unknown class is a deferred error.
void readSchedule(const ObjectView &opt, llvm::StringRef key,
                  OptimizerConfig &out, std::string &error) {
  ObjectView obj =
      ObjectView::of(opt.reader(), *opt.get(key), opt.path().field(key),
                     opt.context(), "a number or a learning-rate schedule");
  std::string cls = obj.getString("class_name");
  checkBuiltin(obj, cls);
  llvm::Expected<ScheduleKind> kind = parseScheduleKind(cls);
  if (!kind)
    return deferError(obj, "class_name", kind.takeError(), error);
  ObjectView c = obj.child("config");
  LearningRateSchedule s;
  s.kind = *kind;
  using SK = ScheduleKind;
  if (s.kind == SK::PiecewiseConstantDecay) {
    s.boundaries = readNumbers(c, "boundaries");
    s.values = readNumbers(c, "values");
  } else {
    s.initialLearningRate = c.getNumber("initial_learning_rate");
    s.decaySteps =
        c.getNumber(s.kind == SK::CosineDecayRestarts ? "first_decay_steps"
                                                      : "decay_steps");
  }
  if (s.kind == SK::ExponentialDecay || s.kind == SK::InverseTimeDecay) {
    s.decayRate = c.getNumber("decay_rate");
    s.staircase = c.getBool("staircase", s.staircase);
  }
  if (s.kind == SK::PolynomialDecay) {
    s.endLearningRate = c.getNumber("end_learning_rate", s.endLearningRate);
    s.power = c.getNumber("power", s.power);
    s.cycle = c.getBool("cycle", s.cycle);
  }
  if (s.kind == SK::CosineDecay || s.kind == SK::CosineDecayRestarts)
    s.alpha = c.getNumber("alpha", s.alpha);
  if (s.kind == SK::CosineDecay) {
    s.warmupTarget = c.getOptNumber("warmup_target");
    s.warmupSteps = c.getNumber("warmup_steps", s.warmupSteps);
  }
  if (s.kind == SK::CosineDecayRestarts) {
    s.tMul = c.getNumber("t_mul", s.tMul);
    s.mMul = c.getNumber("m_mul", s.mMul);
  }
  if (llvm::Error err = s.validate())
    c.fail(llvm::toString(std::move(err)));
  out.schedule = std::move(s);
}

void readOptimizer(const ObjectView &cc, llvm::StringRef key,
                   OptimizerConfig &opt, std::string &error) {
  std::optional<ObjectView> c;
  std::string name = objectName(cc, key, c);
  // toSnakeCase("SGD") is "sgd", "AdamW" gives "adam_w": Keras's string
  // names are the lower-case class names.
  name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
  if (llvm::Expected<OptimizerKind> kind = parseOptimizer(name))
    opt.kind = *kind;
  else
    deferError(cc, key, kind.takeError(), error);
  if (!c)
    return;
  const char *lrKey = c->has("learning_rate") ? "learning_rate" : "lr";
  if (const json::Value *lr = c->get(lrKey)) {
    if (std::optional<double> rate = lr->getAsNumber())
      opt.learningRate = *rate;
    else
      readSchedule(*c, lrKey, opt, error);
  }
  opt.beta1 = c->getNumber("beta_1", opt.beta1);
  if (std::optional<double> beta2 = c->getOptNumber("beta_2"))
    opt.beta2 = *beta2;
  opt.epsilon = c->getNumber("epsilon", opt.epsilon);
  opt.momentum = c->getNumber("momentum", opt.momentum);
  opt.rho = c->getNumber("rho", opt.rho);
  opt.nesterov = c->getBool("nesterov", opt.nesterov);
  opt.amsgrad = c->getBool("amsgrad", opt.amsgrad);
  opt.centered = c->getBool("centered", opt.centered);
  opt.initialAccumulatorValue =
      c->getNumber("initial_accumulator_value", opt.initialAccumulatorValue);
  // Keras writes null for "none"; AdamW always writes its value.
  if (std::optional<double> wd = c->getOptNumber("weight_decay"))
    opt.weightDecay = *wd;
  opt.clipnorm = c->getNumber("clipnorm", opt.clipnorm);
  opt.clipvalue = c->getNumber("clipvalue", opt.clipvalue);
  opt.globalClipnorm = c->getNumber("global_clipnorm", opt.globalClipnorm);
  // What kcc does not train with: the model still imports for inference.
  if (c->getBool("use_ema", false))
    deferError(*c, "use_ema", unsupported("use_ema is not supported"), error);
  for (llvm::StringRef k : {"gradient_accumulation_steps", "loss_scale_factor"})
    if (c->has(k))
      deferError(*c, k, unsupported(k + " is not supported"), error);
}

void readMetrics(const ObjectView &cc, const json::Value &v,
                 const JsonPath &path, std::vector<std::string> &out) {
  // Kept under its registered name: TrainingConfig::validate() names it
  // and what replaces it, so --metrics (TrainingConfig::metrics) can.
  if (std::optional<std::string> custom = customObjectName(v)) {
    out.push_back(*custom);
    return;
  }
  if (std::optional<llvm::StringRef> s = v.getAsString()) {
    out.push_back(s->str());
    return;
  }
  if (const json::Array *a = v.getAsArray()) {
    // A list of metrics (per-output lists are split by readOutputs).
    for (auto [i, m] : llvm::enumerate(*a))
      readMetrics(cc, m, path.index(i), out);
    return;
  }
  ObjectView m = ObjectView::of(cc.reader(), v, path, cc.context(), "a metric");
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
  // By class, with its arguments and instance name (MetricConfig's text
  // form): a metric named other than its default is still read by class.
  if (!metricKindOfClass(cls)) {
    // Not a class kcc knows: its name says what is unsupported.
    out.push_back(m.has("config")
                      ? m.child("config").getString("name", toSnakeCase(cls))
                      : toSnakeCase(cls));
    return;
  }
  const json::Object *config = nullptr;
  if (const json::Value *c = m.get("config"))
    config = c->getAsObject();
  llvm::Expected<std::string> text = metricFromKeras(cls, config);
  if (!text)
    m.failField("config", llvm::toString(text.takeError()));
  out.push_back(*text);
}

/// One loss, a name or a Keras object, at `path`. Sets `customFirst` when
/// the loss is custom and its error is the first (`error` was empty).
void readLoss(const ObjectView &cc, const json::Value *v, const JsonPath &path,
              LossConfig &loss, std::string &error, bool &customFirst) {
  if (std::optional<std::string> custom = customObjectName(*v)) {
    // Kept under its registered name, so C++ can supply it
    // (CompileOptions::customObjects); the CLI reports the error below.
    loss.custom = *custom;
    customFirst = customFirst || error.empty();
    std::string builtins;
    for (LossKind k : allLosses())
      builtins += (builtins.empty() ? "" : ", ") + lossName(k).str();
    return deferErrorAt(
        cc, path,
        llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            customObjectError("loss", *custom,
                              "give a built-in loss with --loss (" + builtins +
                                  "), or from C++ supply it in "
                                  "kcc::CompileOptions::customObjects")),
        error);
  }
  std::optional<ObjectView> c;
  std::string name = objectName(cc, v, path, c);
  // A Loss object is read by its class (its `name` is only a label:
  // Huber's default is "huber_loss"), a function or a bare name by name.
  if (const json::Object *o = v->getAsObject())
    if (std::optional<llvm::StringRef> cls = o->getString("class_name");
        cls && *cls != "function")
      name = cls->str();
  llvm::Expected<LossKind> kind = parseLoss(name);
  if (!kind)
    return deferErrorAt(cc, path, kind.takeError(), error);
  loss.kind = *kind;
  if (!c)
    return;
  // Every constructor argument of the class, under its Keras name.
  for (const auto &[key, value] : c->object()) {
    // A label, the policy, and tf.keras's copy of the function's name.
    if (key == "name" || key == "dtype" || key == "fn")
      continue;
    std::string text;
    if (std::optional<bool> b = value.getAsBoolean())
      text = *b ? "true" : "false";
    else if (value.kind() == json::Value::Null)
      text = "None";
    else if (std::optional<llvm::StringRef> str = value.getAsString())
      text = str->str();
    else if (std::optional<int64_t> n = value.getAsInteger())
      text = std::to_string(*n);
    else if (std::optional<double> d = value.getAsNumber()) {
      char buffer[40];
      std::snprintf(buffer, sizeof(buffer), "%.17g", *d);
      text = buffer;
    } else {
      deferError(*c, key, unsupported("expects a number, a bool or a name"),
                 error);
      continue;
    }
    if (llvm::Error e = loss.setArgument(key, text))
      deferError(*c, key, std::move(e), error);
  }
  if (llvm::Error e = loss.validate())
    deferErrorAt(cc, path, std::move(e), error);
}

/// A dict by output name (not a serialized Keras object) or a list of one
/// entry per output: Keras's per-output form of loss, loss_weights and
/// metrics. Calls `each(k, value, path)` for output k's entry (a dict may
/// leave an output out); a key naming no output, or a list of another
/// length, is an error listing the outputs.
template <typename Fn>
bool forEachOutput(const ObjectView &cc, llvm::StringRef key,
                   llvm::ArrayRef<std::string> outputs, Fn each) {
  const json::Value *v = cc.get(key);
  JsonPath path = cc.path().field(key);
  std::string names;
  for (const std::string &n : outputs)
    names += (names.empty() ? "'" : ", '") + n + "'";
  if (const json::Object *dict = v->getAsObject()) {
    if (dict->get("class_name"))
      return false;
    for (const auto &[name, entry] : *dict) {
      auto it = llvm::find(outputs, name.str());
      if (it == outputs.end())
        cc.failField(key, "names no output '" + name.str() +
                              "' (the model's outputs are " + names + ")");
      each(it - outputs.begin(), entry, path.field(name));
    }
    return true;
  }
  const json::Array *list = v->getAsArray();
  if (!list)
    return false;
  if (list->size() != outputs.size())
    cc.failField(key, "has " + std::to_string(list->size()) +
                          " entries for the model's " +
                          std::to_string(outputs.size()) + " outputs (" +
                          names + ")");
  for (auto [k, entry] : llvm::enumerate(*list))
    each(k, entry, path.index(k));
  return true;
}

/// loss, loss_weights and metrics of a model with the outputs `outputs`.
/// A single loss or metric list applies to every output, as in Keras 3.
void readOutputs(const ObjectView &cc, llvm::ArrayRef<std::string> outputs,
                 std::vector<OutputTraining> &out, std::string &error,
                 bool &customLoss) {
  out.assign(outputs.size(), OutputTraining());
  for (size_t k = 0; k < outputs.size(); ++k)
    out[k].name = outputs[k];
  if (cc.has("loss")) {
    std::vector<bool> given(outputs.size(), false);
    bool perOutput = forEachOutput(
        cc, "loss", outputs,
        [&](size_t k, const json::Value &v, const JsonPath &path) {
          readLoss(cc, &v, path, out[k].loss, error, customLoss);
          given[k] = true;
        });
    if (!perOutput) {
      for (OutputTraining &o : out)
        readLoss(cc, cc.get("loss"), cc.path().field("loss"), o.loss, error,
                 customLoss);
    } else {
      for (size_t k = 0; k < outputs.size(); ++k)
        if (!given[k])
          cc.failField("loss", "gives no loss for output '" + outputs[k] +
                                   "' (kcc trains every output)");
    }
  }
  if (const json::Value *w = cc.get("loss_weights"); w && *w != nullptr) {
    bool perOutput = forEachOutput(
        cc, "loss_weights", outputs,
        [&](size_t k, const json::Value &v, const JsonPath &) {
          std::optional<double> n = v.getAsNumber();
          if (!n)
            cc.failField("loss_weights", "the weight of output '" + outputs[k] +
                                             "' must be a number");
          out[k].lossWeight = *n;
        });
    if (!perOutput)
      cc.failField("loss_weights", "expects a dict by output name or a list "
                                   "of one number per output");
  }
  if (const json::Value *m = cc.get("metrics"); m && *m != nullptr) {
    // A list of lists, one per output, is per output; a flat list applies
    // to every output.
    const json::Array *list = m->getAsArray();
    bool nested = list && list->size() == outputs.size() &&
                  llvm::all_of(*list, [](const json::Value &e) {
                    return e.getAsArray() != nullptr || e == nullptr;
                  });
    bool perOutput = (!list || nested) &&
                     forEachOutput(cc, "metrics", outputs,
                                   [&](size_t k, const json::Value &v,
                                       const JsonPath &path) {
                                     if (v != nullptr)
                                       readMetrics(cc, v, path, out[k].metrics);
                                   });
    if (!perOutput) {
      for (OutputTraining &o : out)
        readMetrics(cc, *m, cc.path().field("metrics"), o.metrics);
    }
  }
}

} // namespace

void keras::readCompileConfig(const ObjectView &in, ImportedModel &out) {
  ObjectView cc = in;
  cc.setContext("compile_config");
  TrainingConfig &config = out.training.emplace();
  if (cc.has("optimizer"))
    readOptimizer(cc, "optimizer", config.optimizer, out.trainingError);
  else if (cc.has("optimizer_config"))
    readOptimizer(cc, "optimizer_config", config.optimizer, out.trainingError);
  std::vector<std::string> outputs;
  if (out.model)
    outputs = out.model->outputNames();
  if (outputs.size() > 1) {
    readOutputs(cc, outputs, config.outputs, out.trainingError,
                out.trainingErrorIsCustomLoss);
    return;
  }
  // One output: a per-output form of one entry is the plain one.
  if (outputs.empty())
    outputs.push_back("output");
  std::vector<OutputTraining> one;
  readOutputs(cc, outputs, one, out.trainingError,
              out.trainingErrorIsCustomLoss);
  config.loss = one[0].loss;
  config.metrics = one[0].metrics;
  if (one[0].lossWeight != 1.0)
    cc.failField("loss_weights", "a loss weight other than 1 on a model "
                                 "with one output is not supported");
}
