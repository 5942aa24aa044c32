//===- ConfigReaders.cpp - Reading Keras layer config fields --------------===//
//
// Keras 2 and Keras 3 write the same keys for the fields read here. Keys kcc
// does not model are ignored when they cannot change the result and
// rejected when they would (checkNull): silently computing something else
// than Keras would is the one thing an importer must not do.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/Initializers.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

std::string keras::readDTypePolicy(const ObjectView &config,
                                   llvm::StringRef key) {
  const json::Value *v = config.get(key);
  if (!v)
    return "float32";
  std::string name;
  if (std::optional<llvm::StringRef> s = v->getAsString()) {
    name = s->str();
  } else if (const json::Object *o = v->getAsObject()) {
    ObjectView policy(config.reader(), *o, config.path().field(key),
                      config.context());
    name = policy.has("config")
               ? policy.child("config").getString("name", "float32")
               : "float32";
  } else {
    config.failField(key, "dtype must be a string or a dtype policy");
  }
  if (name != "float32" && name != "mixed_bfloat16")
    config.failField(key, "dtype '" + name +
                              "' is not supported (kcc imports float32 "
                              "and mixed_bfloat16 models)");
  return name;
}

DType keras::readDType(const ObjectView &config, llvm::StringRef key) {
  if (readDTypePolicy(config, key) != "float32")
    config.failField(key, "dtype '" + readDTypePolicy(config, key) +
                              "' is not supported here (float32 only)");
  return DType::F32;
}

DType keras::readInputDType(const ObjectView &config) {
  if (const json::Value *v = config.get("dtype"))
    if (std::optional<llvm::StringRef> s = v->getAsString()) {
      if (*s == "int32")
        return DType::I32;
      if (*s == "int64")
        return DType::I64;
      if (*s != "float32")
        config.failField("dtype", "dtype '" + s->str() +
                                      "' is not supported (kcc imports "
                                      "float32, int32 and int64 inputs)");
    }
  return readDType(config);
}

void keras::checkChannelsLast(const ObjectView &config) {
  std::string fmt = config.getString("data_format", "channels_last");
  if (fmt != "channels_last")
    config.failField("data_format",
                     "data_format '" + fmt +
                         "' is not supported (kcc layers are channels_last)");
}

void keras::checkNull(const ObjectView &config,
                      std::initializer_list<llvm::StringRef> keys) {
  for (llvm::StringRef key : keys)
    if (config.has(key))
      config.failField(key, "'" + key + "' is not supported (must be null)");
}

std::optional<Regularizer> keras::readRegularizer(const ObjectView &config,
                                                  llvm::StringRef key) {
  const json::Value *v = config.get(key);
  if (!v || v->kind() == json::Value::Null)
    return std::nullopt;
  auto check = [&](double f, llvm::StringRef what) {
    if (!std::isfinite(f) || f < 0)
      config.failField(key, "'" + key + "' " + what +
                                " must be a finite value >= 0");
    return f;
  };
  if (std::optional<llvm::StringRef> s = v->getAsString()) {
    if (*s == "l1" || *s == "L1")
      return Regularizer::L1();
    if (*s == "l2" || *s == "L2")
      return Regularizer::L2();
    if (*s == "l1_l2" || *s == "L1L2")
      return config.reader().kerasMajorVersion() == 2
                 ? Regularizer::L1L2(0.01, 0.01)
                 : Regularizer::L1L2();
    config.failField(key, "regularizer '" + *s +
                              "' is not supported (l1, l2 or l1_l2)");
  }
  if (!v->getAsObject())
    config.failField(key, "'" + key + "' must be a name or a regularizer");
  ObjectView reg = ObjectView::of(config.reader(), *v, config.path().field(key),
                                  config.context(), "a regularizer");
  std::string cls = reg.getString("class_name");
  checkBuiltin(reg, cls);
  if (cls != "L1" && cls != "L2" && cls != "L1L2")
    reg.failField("class_name", "regularizer '" + cls +
                                    "' is not supported (L1, L2 or L1L2)");
  double dl1 = cls == "L1" ? 0.01 : 0, dl2 = cls == "L2" ? 0.01 : 0;
  if (!reg.has("config"))
    return Regularizer{dl1, dl2};
  ObjectView cfg = reg.child("config");
  // L1 has no l2 and L2 no l1: Keras's constructors would refuse them.
  if (cls == "L1" && cfg.has("l2"))
    cfg.failField("l2", "L1 takes no 'l2'");
  if (cls == "L2" && cfg.has("l1"))
    cfg.failField("l1", "L2 takes no 'l1'");
  return Regularizer{check(cfg.getNumber("l1", dl1), "l1"),
                     check(cfg.getNumber("l2", dl2), "l2")};
}

Layer keras::withRegularizers(const ObjectView &config, Layer layer,
                              std::initializer_list<const char *> weights) {
  for (const char *w : weights)
    if (std::optional<Regularizer> r =
            readRegularizer(config, std::string(w) + "_regularizer"))
      layer.withRegularizer(w, *r);
  if (std::optional<Regularizer> r =
          readRegularizer(config, "activity_regularizer"))
    layer.withActivityRegularizer(*r);
  return layer;
}

std::string keras::readActivationAt(const ObjectView &config,
                                    llvm::StringRef key, llvm::StringRef dflt) {
  std::string name =
      dflt.empty() ? config.getString(key) : config.getString(key, dflt);
  // tf.keras 2's hard_sigmoid is clip(0.2 x + 0.5, 0, 1), Keras 3's
  // relu6(x + 3) / 6: a Keras 2 spec naming it would silently change.
  if (name == "hard_sigmoid" && config.reader().kerasMajorVersion() == 2)
    config.failField(key, "activation 'hard_sigmoid' of a Keras 2 spec is "
                          "not supported (Keras 2's 0.2 x + 0.5 differs "
                          "from Keras 3's relu6(x + 3) / 6, the one kcc has)");
  if (!ops::isActivation(name))
    config.failField(key, "activation '" + name +
                              "' is not supported (expected " +
                              ops::activationNames() + ")");
  return name;
}

std::string keras::readActivation(const ObjectView &config, bool required) {
  return readActivationAt(config, "activation", required ? "" : "linear");
}

std::string keras::readInitializer(const ObjectView &config,
                                   llvm::StringRef key, llvm::StringRef dflt) {
  const json::Value *v = config.get(key);
  if (!v)
    return dflt.str();
  init::Initializer result;
  if (std::optional<llvm::StringRef> s = v->getAsString()) {
    result.name = init::fromKerasName(s->str());
    if (result.name.empty())
      config.failField(key, "initializer '" + s->str() +
                                "' is not supported (expected " +
                                init::supportedKerasClasses() +
                                ", or their snake_case names)");
  } else if (v->getAsObject()) {
    ObjectView obj =
        ObjectView::of(config.reader(), *v, config.path().field(key),
                       config.context(), "an initializer");
    std::string cls = obj.getString("class_name");
    checkBuiltin(obj, cls);
    result.name = init::fromKerasName(cls);
    if (result.name.empty())
      obj.failField("class_name", "initializer '" + cls +
                                      "' is not supported (expected " +
                                      init::supportedKerasClasses() + ")");
    if (obj.has("config")) {
      ObjectView cfg = obj.child("config");
      // Keras's get_config() keys of each class.
      const std::string &n = result.name;
      if (n == "random_normal" || n == "truncated_normal") {
        result.mean = cfg.getNumber("mean", 0.0);
        result.stddev = cfg.getNumber("stddev", 0.05);
      } else if (n == "random_uniform") {
        result.minval = cfg.getNumber("minval", -0.05);
        result.maxval = cfg.getNumber("maxval", 0.05);
      } else if (n == "constant") {
        if (const json::Value *value = cfg.get("value");
            value && !value->getAsNumber())
          cfg.failField("value", "Constant's value must be a number (kcc "
                                 "has scalar constants only)");
        result.value = cfg.getNumber("value", 0.0);
      } else if (n == "variance_scaling") {
        result.scale = cfg.getNumber("scale", 1.0);
        result.mode = cfg.getString("mode", "fan_in");
        result.distribution = cfg.getString("distribution", "truncated_normal");
      } else if (n == "identity" || n == "orthogonal") {
        result.gain = cfg.getNumber("gain", 1.0);
      }
    }
    if (std::string why = init::normalize(result); !why.empty())
      obj.fail("initializer '" + cls + "': " + why);
  } else {
    config.failField(key, "'" + key + "' must be a name or an initializer");
  }
  return result.str();
}

int64_t keras::readWidth(const ObjectView &config, llvm::StringRef key) {
  int64_t n = config.getInt(key);
  if (n <= 0)
    config.failField(key,
                     key.str() + " must be positive, got " + std::to_string(n));
  if (TensorSize row = tensorSize({n}, sizeof(float), "f32"); !row)
    config.failField(key, key.str() + " " + std::to_string(n) +
                              " is too large: its bias, " + row.error);
  return n;
}

Size2 keras::checkedSize2(const ObjectView &config, llvm::StringRef key,
                          Size2 s) {
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  if (s.h <= 0 || s.w <= 0 || s.h > kMax || s.w > kMax)
    config.failField(key, "'" + key + "' " + shapeToString({s.h, s.w}) +
                              " must hold values in [1, 2^31-1]");
  return s;
}

std::string keras::readPadding(const ObjectView &config) {
  std::string padding = config.getString("padding", "valid");
  std::string lower = llvm::StringRef(padding).lower();
  if (lower != "valid" && lower != "same")
    config.failField("padding", "padding '" + padding +
                                    "' is not supported (valid or same)");
  return lower;
}

double keras::readNonNegative(const ObjectView &c, llvm::StringRef key,
                              double dflt) {
  double v = c.getNumber(key, dflt);
  if (!(v >= 0) || !std::isfinite(v))
    c.failField(key, "'" + key + "' must be a finite number >= 0, got " +
                         std::to_string(v));
  return v;
}

int64_t keras::readSize1(const ObjectView &c, llvm::StringRef key,
                         std::optional<int64_t> dflt) {
  const json::Value *v = c.get(key);
  if (!v) {
    if (!dflt)
      c.failField(key, "missing required field '" + key + "'");
    return *dflt;
  }
  std::optional<int64_t> n = v->getAsInteger();
  if (!n) {
    Shape list = c.getShape(key);
    if (list.size() != 1)
      c.failField(key, "'" + key + "' must be an int or a list of one int");
    n = list[0];
  }
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  if (*n <= 0 || *n > kMax)
    c.failField(key, "'" + key + "' " + std::to_string(*n) +
                         " must be in [1, 2^31-1]");
  return *n;
}

Size3 keras::readSize3(const ObjectView &c, llvm::StringRef key,
                       std::optional<Size3> dflt) {
  const json::Value *v = c.get(key);
  if (!v) {
    if (!dflt)
      c.failField(key, "missing required field '" + key + "'");
    return *dflt;
  }
  Shape s;
  if (std::optional<int64_t> n = v->getAsInteger())
    s = {*n, *n, *n};
  else
    s = c.getShape(key);
  if (s.size() != 3)
    c.failField(key, "'" + key + "' must be an int or a list of three ints");
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  for (int64_t n : s)
    if (n <= 0 || n > kMax)
      c.failField(key, "'" + key + "' " + shapeToString(s) +
                           " must hold values in [1, 2^31-1]");
  return Size3(s[0], s[1], s[2]);
}

Shape keras::readIntOrShape(const ObjectView &c, llvm::StringRef key) {
  const json::Value *v = c.get(key);
  if (!v)
    return {};
  if (std::optional<int64_t> n = v->getAsInteger())
    return {*n};
  return c.getShape(key);
}
