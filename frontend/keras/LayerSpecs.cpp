//===- LayerSpecs.cpp - Keras layer configs to kcc layers -----------------===//
//
// Keras 2 and Keras 3 write the same config keys for the layers kcc has, so
// one reader per class serves both. Keys kcc does not model are ignored when
// they cannot change the result (names of regularizer-free fields, "sparse",
// build_config, ...) and rejected when they would (a constraint, output_padding,
// channels_first): silently computing something else than Keras would is
// the one thing an importer must not do.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/LayerSpecs.h"
#include "frontend/Initializers.h"
#include "frontend/Ops.h"
#include "runtime/MemoryBudget.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace kcc;
using namespace kcc::keras;
namespace json = llvm::json;

std::string keras::layerContext(const std::string &name,
                                const std::string &cls) {
  return "layer '" + name + "' (" + cls + ")";
}

void keras::checkBuiltin(const ObjectView &entry,
                         const std::string &className) {
  if (const json::Value *r = entry.get("registered_name")) {
    std::optional<llvm::StringRef> s = r->getAsString();
    if (!s || *s != className)
      entry.failField("registered_name",
                      "custom object '" +
                          (s ? s->str() : std::string("?")) +
                          "' cannot be imported: kcc only knows Keras's "
                          "built-in layers");
  }
  if (const json::Value *m = entry.get("module")) {
    std::optional<llvm::StringRef> s = m->getAsString();
    if (!s || !(*s == "keras" || s->starts_with("keras.")))
      entry.failField("module", "custom object from module '" +
                                    (s ? s->str() : std::string("?")) +
                                    "' cannot be imported: kcc only knows "
                                    "Keras's built-in layers");
  }
}

namespace {

/// Only float32 is supported: a string ("float32") or a dtype policy object
/// (Keras 3 DTypePolicy, Keras 2 Policy) whose config names it.
DType readDType(const ObjectView &config, llvm::StringRef key = "dtype") {
  const json::Value *v = config.get(key);
  if (!v)
    return DType::F32;
  std::string name;
  if (std::optional<llvm::StringRef> s = v->getAsString()) {
    name = s->str();
  } else if (const json::Object *o = v->getAsObject()) {
    ObjectView policy(config.reader(), *o, config.path().field(key),
                      config.context());
    name = policy.has("config") ? policy.child("config").getString("name",
                                                                    "float32")
                                : "float32";
  } else {
    config.failField(key, "dtype must be a string or a dtype policy");
  }
  if (name != "float32")
    config.failField(key, "dtype '" + name +
                              "' is not supported (kcc imports float32 "
                              "models)");
  return DType::F32;
}

/// An InputLayer's dtype: float32, or int32 / int64 ids (Embedding).
DType readInputDType(const ObjectView &config) {
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

void checkChannelsLast(const ObjectView &config) {
  std::string fmt = config.getString("data_format", "channels_last");
  if (fmt != "channels_last")
    config.failField("data_format",
                     "data_format '" + fmt +
                         "' is not supported (kcc layers are channels_last)");
}

/// Regularizers change the loss and constraints the update: kcc has
/// neither, so a non-null one is an error rather than silently dropped.
void checkNull(const ObjectView &config,
               std::initializer_list<llvm::StringRef> keys) {
  for (llvm::StringRef key : keys)
    if (config.has(key))
      config.failField(key, "'" + key + "' is not supported (must be null)");
}

/// A `<weight>_regularizer` / `activity_regularizer` field: null, Keras's
/// names ("l1", "l2": factor 0.01; "l1_l2": Keras 3's L1L2(), no penalty,
/// Keras 2's l1_l2(), 0.01 each) or a serialized L1, L2 or L1L2.
std::optional<Regularizer> readRegularizer(const ObjectView &config,
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

/// Sets the regularizers of `weights` ("kernel" reads kernel_regularizer)
/// and the activity regularizer the config names on `layer`.
Layer withRegularizers(const ObjectView &config, Layer layer,
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

/// The activation named by `key`; `dflt` when absent, required when empty.
std::string readActivationAt(const ObjectView &config, llvm::StringRef key,
                             llvm::StringRef dflt) {
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

std::string readActivation(const ObjectView &config, bool required = false) {
  return readActivationAt(config, "activation", required ? "" : "linear");
}

/// A string ("glorot_uniform", "random_normal": Keras's defaults) or an
/// object ({"class_name": "RandomNormal", "config": {"mean": 0.0,
/// "stddev": 0.02, "seed": null}}) as kcc's text form (init::Initializer);
/// seeds are ignored, kcc draws its own streams.
std::string readInitializer(const ObjectView &config, llvm::StringRef key,
                            llvm::StringRef dflt) {
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
    ObjectView obj = ObjectView::of(config.reader(), *v,
                                    config.path().field(key),
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
        if (const json::Value *value = cfg.get("value"); value &&
                                                          !value->getAsNumber())
          cfg.failField("value", "Constant's value must be a number (kcc "
                                 "has scalar constants only)");
        result.value = cfg.getNumber("value", 0.0);
      } else if (n == "variance_scaling") {
        result.scale = cfg.getNumber("scale", 1.0);
        result.mode = cfg.getString("mode", "fan_in");
        result.distribution =
            cfg.getString("distribution", "truncated_normal");
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

void checkUnitSize(const ObjectView &config, llvm::StringRef key) {
  if (std::optional<Size2> d = config.getOptSize2(key))
    if (d->h != 1 || d->w != 1)
      config.failField(key, "'" + key + "' " +
                                shapeToString({d->h, d->w}) +
                                " is not supported (only 1)");
}

/// A layer width (`units`, `filters`): positive, and a vector of that many
/// floats (the bias, one row of the output) within the per-tensor limit, so
/// a spec asking for 10^12 units fails here, at its field.
int64_t readWidth(const ObjectView &config, llvm::StringRef key) {
  int64_t n = config.getInt(key);
  if (n <= 0)
    config.failField(key,
                     key.str() + " must be positive, got " + std::to_string(n));
  if (TensorSize row = tensorSize({n}, sizeof(float), "f32"); !row)
    config.failField(key, key.str() + " " + std::to_string(n) +
                              " is too large: its bias, " + row.error);
  return n;
}

/// A Size2 field (kernel_size, strides, pool_size): each entry positive
/// and below 2^31, far above any image yet small enough that window
/// arithmetic on it cannot overflow.
Size2 checkedSize2(const ObjectView &config, llvm::StringRef key, Size2 s) {
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  if (s.h <= 0 || s.w <= 0 || s.h > kMax || s.w > kMax)
    config.failField(key, "'" + key + "' " + shapeToString({s.h, s.w}) +
                              " must hold values in [1, 2^31-1]");
  return s;
}

std::string readPadding(const ObjectView &config) {
  std::string padding = config.getString("padding", "valid");
  std::string lower = llvm::StringRef(padding).lower();
  if (lower != "valid" && lower != "same")
    config.failField("padding", "padding '" + padding +
                                    "' is not supported (valid or same)");
  return lower;
}

Layer buildDense(const ObjectView &c) {
  checkNull(c, {"kernel_constraint", "bias_constraint", "lora_rank"});
  int64_t units = readWidth(c, "units");
  return withRegularizers(
      c,
      Dense(units, readActivation(c), c.getBool("use_bias", true),
            readInitializer(c, "kernel_initializer", "glorot_uniform"),
            readInitializer(c, "bias_initializer", "zeros")),
      {"kernel", "bias"});
}

/// What every convolution class reads the same way: channels_last, no
/// constraint on `kernels` (Keras's names for its kernels) or the bias, no
/// regularizer unless the class is `regularizable` (withRegularizers reads
/// them then), and the window options.
struct ConvSpec {
  Size2 kernel = 1, strides = 1, dilation = 1;
  std::string padding, activation;
  bool useBias;
};

ConvSpec readConvSpec(const ObjectView &c,
                      std::initializer_list<llvm::StringRef> kernels,
                      bool regularizable = false) {
  std::vector<llvm::StringRef> nullKeys{"bias_constraint", "lora_rank"};
  if (!regularizable)
    nullKeys.insert(nullKeys.end(),
                    {"bias_regularizer", "activity_regularizer"});
  std::vector<std::string> owned;
  for (llvm::StringRef k : kernels) {
    owned.push_back(k.str() + "_constraint");
    if (!regularizable)
      owned.push_back(k.str() + "_regularizer");
  }
  for (const std::string &k : owned)
    nullKeys.push_back(k);
  for (llvm::StringRef k : nullKeys)
    checkNull(c, {k});
  checkChannelsLast(c);
  ConvSpec s;
  s.kernel =
      checkedSize2(c, "kernel_size", c.getSize2("kernel_size", std::nullopt));
  s.strides = checkedSize2(c, "strides", c.getSize2("strides", Size2(1)));
  s.dilation =
      checkedSize2(c, "dilation_rate", c.getSize2("dilation_rate", Size2(1)));
  s.padding = readPadding(c);
  s.activation = readActivation(c);
  s.useBias = c.getBool("use_bias", true);
  return s;
}

Layer buildConv2D(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"kernel"}, /*regularizable=*/true);
  int64_t filters = readWidth(c, "filters");
  int64_t groups = c.getInt("groups", 1);
  if (groups < 1 || filters % groups != 0)
    c.failField("groups", "groups (" + std::to_string(groups) +
                              ") must be positive and divide filters (" +
                              std::to_string(filters) + ")");
  Layer conv =
      Conv2D(filters, s.kernel, s.strides, s.padding, s.dilation, groups,
             s.activation, s.useBias,
             readInitializer(c, "kernel_initializer", "glorot_uniform"),
             readInitializer(c, "bias_initializer", "zeros"));
  return withRegularizers(c, conv, {"kernel", "bias"});
}

int64_t readDepthMultiplier(const ObjectView &c) {
  int64_t m = c.getInt("depth_multiplier", 1);
  if (m < 1)
    c.failField("depth_multiplier",
                "depth_multiplier must be positive, got " + std::to_string(m));
  return m;
}

Layer buildDepthwiseConv2D(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"depthwise"}, /*regularizable=*/true);
  return withRegularizers(
      c,
      DepthwiseConv2D(
          s.kernel, s.strides, s.padding, readDepthMultiplier(c), s.dilation,
          s.activation, s.useBias,
          readInitializer(c, "depthwise_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"depthwise", "bias"});
}

Layer buildSeparableConv2D(const ObjectView &c) {
  ConvSpec s =
      readConvSpec(c, {"depthwise", "pointwise"}, /*regularizable=*/true);
  int64_t filters = readWidth(c, "filters");
  return withRegularizers(
      c,
      SeparableConv2D(
          filters, s.kernel, s.strides, s.padding, s.dilation,
          readDepthMultiplier(c), s.activation, s.useBias,
          readInitializer(c, "depthwise_initializer", "glorot_uniform"),
          readInitializer(c, "pointwise_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"depthwise", "pointwise", "bias"});
}

Layer buildConv2DTranspose(const ObjectView &c) {
  ConvSpec s = readConvSpec(c, {"kernel"}, /*regularizable=*/true);
  checkNull(c, {"output_padding"});
  int64_t filters = readWidth(c, "filters");
  return withRegularizers(
      c,
      Conv2DTranspose(
          filters, s.kernel, s.strides, s.padding, s.dilation, s.activation,
          s.useBias,
          readInitializer(c, "kernel_initializer", "glorot_uniform"),
          readInitializer(c, "bias_initializer", "zeros")),
      {"kernel", "bias"});
}

Layer buildPool(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  Size2 pool = checkedSize2(c, "pool_size", c.getSize2("pool_size", Size2(2)));
  std::optional<Size2> strides = c.getOptSize2("strides");
  if (strides)
    checkedSize2(c, "strides", *strides);
  if (isMax)
    return MaxPooling2D(pool, strides, readPadding(c));
  return AveragePooling2D(pool, strides, readPadding(c));
}

Layer buildDropout(const ObjectView &c) {
  checkNull(c, {"noise_shape"});
  double rate = c.getNumber("rate");
  if (!(rate >= 0 && rate < 1))
    c.failField("rate", "rate must be in [0, 1), got " + std::to_string(rate));
  int64_t seed = c.getInt("seed", 0);
  return Dropout(rate, static_cast<uint64_t>(seed));
}

/// A finite number >= 0 (Keras's ReLU, LeakyReLU arguments).
double readNonNegative(const ObjectView &c, llvm::StringRef key, double dflt) {
  double v = c.getNumber(key, dflt);
  if (!(v >= 0) || !std::isfinite(v))
    c.failField(key, "'" + key + "' must be a finite number >= 0, got " +
                         std::to_string(v));
  return v;
}

Layer buildReLU(const ObjectView &c) {
  std::optional<double> maxValue = c.getOptNumber("max_value");
  if (maxValue && !(*maxValue >= 0))
    c.failField("max_value", "'max_value' must be >= 0");
  return ReLU(maxValue, readNonNegative(c, "negative_slope", 0.0),
              readNonNegative(c, "threshold", 0.0));
}

Layer buildLeakyReLU(const ObjectView &c) {
  // Keras 3 writes negative_slope; Keras 2 wrote alpha (same default).
  llvm::StringRef key = c.has("negative_slope") || !c.has("alpha")
                            ? "negative_slope"
                            : "alpha";
  return LeakyReLU(readNonNegative(c, key, 0.3));
}

Layer buildPReLU(const ObjectView &c) {
  checkNull(c, {"alpha_regularizer", "alpha_constraint"});
  std::vector<int64_t> shared;
  if (const json::Value *v = c.get("shared_axes")) {
    if (std::optional<int64_t> one = v->getAsInteger())
      shared.push_back(*one);
    else
      shared = c.getShape("shared_axes");
    for (int64_t a : shared)
      if (a < 1)
        c.failField("shared_axes", "'shared_axes' entries must be >= 1 "
                                   "(axis 0 is the batch), got " +
                                       std::to_string(a));
  }
  return PReLU(readInitializer(c, "alpha_initializer", "zeros"), shared);
}

Layer buildELU(const ObjectView &c) {
  double alpha = c.getNumber("alpha", 1.0);
  if (!std::isfinite(alpha))
    c.failField("alpha", "'alpha' must be finite");
  return ELU(alpha);
}

/// Keras's padding / cropping argument: an int, [h, w] or [[top, bottom],
/// [left, right]], each entry in [0, 2^31-1].
Sides2 readSides(const ObjectView &c, llvm::StringRef key, int64_t dflt) {
  const json::Value *v = c.get(key);
  if (!v)
    return Sides2(dflt);
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  auto bad = [&]() -> int64_t {
    c.failField(key, "'" + key +
                         "' must be an int, [h, w] or [[top, bottom], [left, "
                         "right]] of values in [0, 2^31-1]");
  };
  auto entry = [&](const json::Value &e) -> int64_t {
    std::optional<int64_t> i = e.getAsInteger();
    return i && *i >= 0 && *i <= kMax ? *i : bad();
  };
  if (v->getAsInteger())
    return Sides2(entry(*v));
  const json::Array *a = v->getAsArray();
  if (!a || a->size() != 2)
    bad();
  if ((*a)[0].getAsInteger() && (*a)[1].getAsInteger())
    return Sides2(entry((*a)[0]), entry((*a)[1]));
  const json::Array *rows = (*a)[0].getAsArray();
  const json::Array *cols = (*a)[1].getAsArray();
  if (!rows || !cols || rows->size() != 2 || cols->size() != 2)
    bad();
  return Sides2({entry((*rows)[0]), entry((*rows)[1])},
                {entry((*cols)[0]), entry((*cols)[1])});
}

Layer buildUpSampling2D(const ObjectView &c) {
  checkChannelsLast(c);
  std::string interpolation = c.getString("interpolation", "nearest");
  if (interpolation != "nearest")
    c.failField("interpolation", "interpolation '" + interpolation +
                                     "' is not supported (only nearest)");
  return UpSampling2D(checkedSize2(c, "size", c.getSize2("size", Size2(2))));
}

Layer buildGlobalPool(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  bool keepdims = c.getBool("keepdims", false);
  if (isMax)
    return GlobalMaxPooling2D(keepdims);
  return GlobalAveragePooling2D(keepdims);
}

/// Keras 3 writes axis as an int (-1), Keras 2 after build as a list of
/// one positive axis ([3]); the layer checks it against the input's rank.
Layer buildBatchNormalization(const ObjectView &c) {
  checkNull(c, {"beta_constraint", "gamma_constraint", "virtual_batch_size",
                "adjustment"});
  if (c.getBool("renorm", false))
    c.failField("renorm", "batch renormalization (renorm) is not supported");
  int64_t axis = -1;
  if (const json::Value *v = c.get("axis")) {
    const json::Array *list = v->getAsArray();
    std::optional<int64_t> one =
        list ? (list->size() == 1 ? (*list)[0].getAsInteger() : std::nullopt)
             : v->getAsInteger();
    if (!one || *one < -1 || *one > (int64_t(1) << 31))
      c.failField("axis", "'axis' must be one axis (kcc normalizes over the "
                          "last axis only)");
    axis = *one;
  }
  double momentum = c.getNumber("momentum", 0.99);
  double epsilon = c.getNumber("epsilon", 1e-3);
  if (!std::isfinite(momentum))
    c.failField("momentum", "'momentum' must be finite");
  if (!(std::isfinite(epsilon) && epsilon > 0))
    c.failField("epsilon", "'epsilon' must be finite and > 0");
  Layer bn = BatchNormalization(
      axis, momentum, epsilon, c.getBool("center", true),
      c.getBool("scale", true), readInitializer(c, "beta_initializer", "zeros"),
      readInitializer(c, "gamma_initializer", "ones"),
      readInitializer(c, "moving_mean_initializer", "zeros"),
      readInitializer(c, "moving_variance_initializer", "ones"),
      c.getBool("synchronized", false));
  return withRegularizers(c, bn, {"beta", "gamma"});
}

/// Keras 3 writes axis as a list ([-1]), Keras 2 after build as a list of
/// positive axes ([2]), either may be a bare int; one axis only, which the
/// layer checks is the last.
Layer buildLayerNormalization(const ObjectView &c) {
  checkNull(c, {"beta_regularizer", "gamma_regularizer", "beta_constraint",
                "gamma_constraint"});
  if (c.getBool("rms_scaling", false))
    c.failField("rms_scaling", "rms_scaling: true is not supported");
  int64_t axis = -1;
  if (const json::Value *v = c.get("axis")) {
    const json::Array *list = v->getAsArray();
    std::optional<int64_t> one =
        list ? (list->size() == 1 ? (*list)[0].getAsInteger() : std::nullopt)
             : v->getAsInteger();
    if (!one || *one < -1 || *one > (int64_t(1) << 31))
      c.failField("axis", "'axis' must be one axis (kcc normalizes over the "
                          "last axis only)");
    axis = *one;
  }
  double epsilon = c.getNumber("epsilon", 1e-3);
  if (!(std::isfinite(epsilon) && epsilon > 0))
    c.failField("epsilon", "'epsilon' must be finite and > 0");
  return LayerNormalization(
      axis, epsilon, c.getBool("center", true), c.getBool("scale", true),
      readInitializer(c, "beta_initializer", "zeros"),
      readInitializer(c, "gamma_initializer", "ones"));
}

/// A 1-D window field (kernel_size, strides, pool_size, dilation_rate,
/// size): an int or a one-element list, in [1, 2^31-1].
int64_t readSize1(const ObjectView &c, llvm::StringRef key,
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

Layer buildEmbedding(const ObjectView &c) {
  checkNull(c, {"embeddings_constraint", "lora_rank"});
  if (c.getBool("mask_zero", false))
    c.failField("mask_zero", "mask_zero: true is not supported (kcc has no "
                             "masks; pad with ids the model can learn)");
  if (c.has("weights"))
    c.failField("weights", "'weights' in the config is not supported");
  return withRegularizers(
      c,
      Embedding(readWidth(c, "input_dim"), readWidth(c, "output_dim"),
                readInitializer(c, "embeddings_initializer", "uniform")),
      {"embeddings"});
}

Layer buildConv1D(const ObjectView &c) {
  checkNull(c, {"kernel_constraint", "bias_constraint", "lora_rank"});
  checkChannelsLast(c);
  if (c.getInt("groups", 1) != 1)
    c.failField("groups", "grouped convolutions are not supported");
  std::string padding = llvm::StringRef(c.getString("padding", "valid")).lower();
  if (padding != "valid" && padding != "same" && padding != "causal")
    c.failField("padding", "padding '" + padding +
                               "' is not supported (valid, same or causal)");
  int64_t filters = readWidth(c, "filters");
  Layer conv = Conv1D(filters, readSize1(c, "kernel_size", std::nullopt),
                      readSize1(c, "strides", 1), padding,
                      readSize1(c, "dilation_rate", 1), readActivation(c),
                      c.getBool("use_bias", true),
                      readInitializer(c, "kernel_initializer", "glorot_uniform"),
                      readInitializer(c, "bias_initializer", "zeros"));
  return withRegularizers(c, conv, {"kernel", "bias"});
}

Layer buildPool1D(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  int64_t pool = readSize1(c, "pool_size", 2);
  std::optional<int64_t> strides;
  if (c.has("strides"))
    strides = readSize1(c, "strides", std::nullopt);
  if (isMax)
    return MaxPooling1D(pool, strides, readPadding(c));
  return AveragePooling1D(pool, strides, readPadding(c));
}

Layer buildGlobalPool1D(const ObjectView &c, bool isMax) {
  checkChannelsLast(c);
  bool keepdims = c.getBool("keepdims", false);
  if (isMax)
    return GlobalMaxPooling1D(keepdims);
  return GlobalAveragePooling1D(keepdims);
}

/// An int (both sides) or [before, after].
Layer buildZeroPadding1D(const ObjectView &c) {
  const json::Value *v = c.get("padding");
  if (!v)
    return ZeroPadding1D(1);
  constexpr int64_t kMax = (int64_t(1) << 31) - 1;
  auto check = [&](int64_t n) {
    if (n < 0 || n > kMax)
      c.failField("padding", "'padding' entries must be in [0, 2^31-1]");
    return n;
  };
  if (std::optional<int64_t> n = v->getAsInteger())
    return ZeroPadding1D(check(*n));
  Shape p = c.getShape("padding");
  if (p.size() != 2)
    c.failField("padding", "'padding' must be an int or [before, after]");
  return ZeroPadding1D(check(p[0]), check(p[1]));
}

/// An int or a list of ints (null entries, Keras's None, read as -1);
/// empty when absent.
Shape readIntOrShape(const ObjectView &c, llvm::StringRef key) {
  const json::Value *v = c.get(key);
  if (!v)
    return {};
  if (std::optional<int64_t> n = v->getAsInteger())
    return {*n};
  return c.getShape(key);
}

Layer buildEinsumDense(const ObjectView &c) {
  checkNull(c, {"kernel_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "bias_constraint",
                "lora_rank", "quantization_config"});
  Shape outputShape = readIntOrShape(c, "output_shape");
  if (outputShape.empty())
    c.failField("output_shape", "missing required field 'output_shape'");
  return EinsumDense(c.getString("equation"), outputShape,
                     c.getString("bias_axes", ""), readActivation(c),
                     readInitializer(c, "kernel_initializer", "glorot_uniform"),
                     readInitializer(c, "bias_initializer", "zeros"));
}

Layer buildMultiHeadAttention(const ObjectView &c, const CallOptions &call) {
  checkNull(c, {"kernel_regularizer", "bias_regularizer",
                "activity_regularizer", "kernel_constraint", "bias_constraint",
                "sliding_window"});
  if (c.getNumber("dropout", 0.0) != 0.0)
    c.failField("dropout", "dropout on the attention scores is not supported "
                           "(must be 0)");
  if (c.getBool("use_gate", false))
    c.failField("use_gate", "use_gate: true is not supported");
  if (c.has("attention_axes")) {
    Shape axes = readIntOrShape(c, "attention_axes");
    if (axes.size() != 1 || (axes[0] != 1 && axes[0] != -2))
      c.failField("attention_axes", "attention over axes " +
                                        shapeToString(axes) +
                                        " is not supported (only [1], the "
                                        "steps of a rank-3 input)");
  }
  int64_t heads = readWidth(c, "num_heads");
  int64_t keyDim = readWidth(c, "key_dim");
  int64_t valueDim = c.has("value_dim") ? readWidth(c, "value_dim") : keyDim;
  Shape outputShape = readIntOrShape(c, "output_shape");
  for (int64_t d : outputShape)
    if (d <= 0)
      c.failField("output_shape", "'output_shape' must hold positive sizes");
  return MultiHeadAttention(
      heads, keyDim, valueDim, c.getBool("use_bias", true), outputShape,
      call.useCausalMask,
      readInitializer(c, "kernel_initializer", "glorot_uniform"),
      readInitializer(c, "bias_initializer", "zeros"));
}

/// LSTM, GRU and SimpleRNN, alone or as the layer a Bidirectional wraps.
/// What would change the result and kcc does not model (dropout, masks
/// carried across batches, constraints, regularizers) is refused; unroll
/// and implementation only choose how Keras computes the same values.
Layer buildRecurrent(const ObjectView &c, const std::string &cls) {
  checkNull(c, {"kernel_constraint", "recurrent_constraint",
                "bias_constraint", "kernel_regularizer",
                "recurrent_regularizer", "bias_regularizer",
                "activity_regularizer"});
  if (c.getBool("stateful", false))
    c.failField("stateful", "stateful: true is not supported (every batch "
                            "starts from zero states)");
  if (c.getBool("time_major", false))
    c.failField("time_major", "time_major: true is not supported");
  for (const char *key : {"dropout", "recurrent_dropout"})
    if (c.getNumber(key, 0.0) != 0.0)
      c.failField(key, "'" + std::string(key) +
                           "' is not supported (must be 0)");
  RecurrentOptions options;
  options.returnSequences = c.getBool("return_sequences", false);
  options.returnState = c.getBool("return_state", false);
  options.goBackwards = c.getBool("go_backwards", false);
  int64_t units = readWidth(c, "units");
  int64_t gates = cls == "LSTM" ? 4 : cls == "GRU" ? 3 : 1;
  if (TensorSize row = tensorSize({gates * 2, units}, sizeof(float), "f32");
      !row)
    c.failField("units", "units " + std::to_string(units) +
                             " is too large: its gates, " + row.error);
  std::string activation = readActivationAt(c, "activation", "tanh");
  bool useBias = c.getBool("use_bias", true);
  std::string kernelInit =
      readInitializer(c, "kernel_initializer", "glorot_uniform");
  std::string recurrentInit =
      readInitializer(c, "recurrent_initializer", "orthogonal");
  std::string biasInit = readInitializer(c, "bias_initializer", "zeros");
  if (cls == "SimpleRNN")
    return SimpleRNN(units, activation, useBias, kernelInit, recurrentInit,
                     biasInit, options);
  std::string recurrentActivation =
      readActivationAt(c, "recurrent_activation", "sigmoid");
  if (cls == "LSTM")
    return LSTM(units, activation, recurrentActivation, useBias, kernelInit,
                recurrentInit, biasInit, c.getBool("unit_forget_bias", true),
                options);
  return GRU(units, activation, recurrentActivation, useBias, kernelInit,
             recurrentInit, biasInit, options,
             c.getBool("reset_after", true));
}

bool isRecurrentClass(llvm::StringRef cls) {
  return cls == "LSTM" || cls == "GRU" || cls == "SimpleRNN";
}

/// The recurrent layer of a Bidirectional's "layer" or "backward_layer".
Layer buildWrappedRecurrent(const ObjectView &c, llvm::StringRef key) {
  ObjectView entry = c.child(key);
  std::string cls = entry.getString("class_name");
  checkBuiltin(entry, cls);
  if (!isRecurrentClass(cls))
    entry.failField("class_name", "Bidirectional around '" + cls +
                                      "' is not supported (LSTM, GRU or "
                                      "SimpleRNN)");
  ObjectView config = entry.child("config");
  readDType(config);
  return buildRecurrent(config, cls);
}

/// kcc's Bidirectional runs a copy of the forward layer backwards, so a
/// backward_layer must be that copy: the same config but go_backwards.
Layer buildBidirectional(const ObjectView &c) {
  const json::Value *mode = c.object().get("merge_mode");
  if (mode && mode->kind() == json::Value::Null)
    c.failField("merge_mode", "merge_mode: null (separate forward and "
                              "backward outputs) is not supported");
  Layer forward = buildWrappedRecurrent(c, "layer");
  if (c.has("backward_layer")) {
    Layer backward = buildWrappedRecurrent(c, "backward_layer");
    json::Object f = forward.impl()->kerasConfig();
    json::Object b = backward.impl()->kerasConfig();
    bool flipped = f.getBoolean("go_backwards") != b.getBoolean("go_backwards");
    b["go_backwards"] = f["go_backwards"];
    if (!flipped || json::Value(std::move(f)) != json::Value(std::move(b)))
      c.failField("backward_layer",
                  "a backward_layer other than the forward layer going "
                  "the other way is not supported");
  }
  return Bidirectional(forward, c.getString("merge_mode", "concat"));
}

} // namespace

std::string keras::sublayerGroup(llvm::StringRef sublayer) {
  if (sublayer == "attention_output")
    return "output_dense";
  // A recurrent layer's cell, and the cells of a Bidirectional's two
  // layers, are stored at these paths.
  if (sublayer == "cell" || sublayer.contains('/'))
    return sublayer.str();
  return (sublayer + "_dense").str();
}

std::optional<Shape> keras::readBatchInputShape(const ObjectView &config) {
  if (!config.has("batch_input_shape"))
    return std::nullopt;
  Shape s = config.getShape("batch_input_shape");
  if (s.empty())
    config.failField("batch_input_shape", "must include the batch dimension");
  return Shape(s.begin() + 1, s.end());
}

InputSpec keras::readInputLayer(const ObjectView &config) {
  InputSpec in;
  in.name = config.getString("name", "input_layer");
  // Keras 3: batch_shape (or shape, batch excluded); Keras 2:
  // batch_input_shape.
  Shape batched;
  if (config.has("batch_shape")) {
    batched = config.getShape("batch_shape");
  } else if (config.has("batch_input_shape")) {
    batched = config.getShape("batch_input_shape");
  } else if (config.has("shape")) {
    batched = config.getShape("shape");
    batched.insert(batched.begin(), -1);
  } else {
    config.failField("batch_shape", "missing required field 'batch_shape'");
  }
  if (batched.empty())
    config.fail("the input shape must include the batch dimension");
  in.shape.assign(batched.begin() + 1, batched.end());
  for (int64_t d : in.shape)
    if (d <= 0)
      config.fail("input shape " + shapeToString(in.shape) +
                  " must be static (only the batch dimension may be None)");
  if (config.getBool("sparse", false) || config.getBool("ragged", false))
    config.fail("sparse and ragged inputs are not supported");
  in.dtype = readInputDType(config);
  // One example must be a tensor kcc can hold; the batch is checked when
  // the model is traced.
  Shape example{1};
  example.insert(example.end(), in.shape.begin(), in.shape.end());
  if (TensorSize size =
          tensorSize(example, dtypeSize(in.dtype), dtypeName(in.dtype));
      !size)
    config.fail("input shape " + shapeToString(in.shape) +
                " is too large: one example, " + size.error);
  return in;
}

BuiltLayer keras::buildLayer(const ObjectView &c, const std::string &cls,
                             const std::string &name,
                             const CallOptions &call) {
  if (cls == "Lambda")
    c.fail("Lambda layers hold Python code and cannot be imported");
  if (cls == "Sequential" || cls == "Functional" || cls == "Model")
    c.fail("nested models are not supported");
  readDType(c);
  std::optional<Layer> layer;
  try {
    if (cls == "Dense")
      layer = buildDense(c);
    else if (cls == "Conv2D")
      layer = buildConv2D(c);
    else if (cls == "DepthwiseConv2D")
      layer = buildDepthwiseConv2D(c);
    else if (cls == "SeparableConv2D")
      layer = buildSeparableConv2D(c);
    else if (cls == "Conv2DTranspose")
      layer = buildConv2DTranspose(c);
    else if (cls == "MaxPooling2D")
      layer = buildPool(c, /*isMax=*/true);
    else if (cls == "AveragePooling2D")
      layer = buildPool(c, /*isMax=*/false);
    else if (cls == "Flatten") {
      checkChannelsLast(c);
      layer = Flatten();
    } else if (cls == "Reshape")
      layer = Reshape(c.getShape("target_shape"));
    else if (cls == "Dropout")
      layer = buildDropout(c);
    else if (cls == "Activation")
      layer = Activation(readActivation(c, /*required=*/true));
    else if (cls == "Softmax")
      layer = Softmax(c.getInt("axis", -1));
    else if (cls == "Add")
      layer = Add();
    else if (cls == "ReLU")
      layer = buildReLU(c);
    else if (cls == "LeakyReLU")
      layer = buildLeakyReLU(c);
    else if (cls == "PReLU")
      layer = buildPReLU(c);
    else if (cls == "ELU")
      layer = buildELU(c);
    else if (cls == "Concatenate")
      layer = Concatenate(c.getInt("axis", -1));
    else if (cls == "Multiply")
      layer = Multiply();
    else if (cls == "Subtract")
      layer = Subtract();
    else if (cls == "Average")
      layer = Average();
    else if (cls == "Maximum")
      layer = Maximum();
    else if (cls == "Minimum")
      layer = Minimum();
    else if (cls == "GlobalAveragePooling2D")
      layer = buildGlobalPool(c, /*isMax=*/false);
    else if (cls == "GlobalMaxPooling2D")
      layer = buildGlobalPool(c, /*isMax=*/true);
    else if (cls == "ZeroPadding2D") {
      checkChannelsLast(c);
      layer = ZeroPadding2D(readSides(c, "padding", 1));
    } else if (cls == "Cropping2D") {
      checkChannelsLast(c);
      layer = Cropping2D(readSides(c, "cropping", 0));
    } else if (cls == "UpSampling2D")
      layer = buildUpSampling2D(c);
    else if (cls == "BatchNormalization")
      layer = buildBatchNormalization(c);
    else if (cls == "LayerNormalization")
      layer = buildLayerNormalization(c);
    else if (cls == "EinsumDense")
      layer = buildEinsumDense(c);
    else if (cls == "MultiHeadAttention")
      layer = buildMultiHeadAttention(c, call);
    else if (cls == "Embedding")
      layer = buildEmbedding(c);
    else if (cls == "Conv1D")
      layer = buildConv1D(c);
    else if (cls == "MaxPooling1D")
      layer = buildPool1D(c, /*isMax=*/true);
    else if (cls == "AveragePooling1D")
      layer = buildPool1D(c, /*isMax=*/false);
    else if (cls == "GlobalAveragePooling1D")
      layer = buildGlobalPool1D(c, /*isMax=*/false);
    else if (cls == "GlobalMaxPooling1D")
      layer = buildGlobalPool1D(c, /*isMax=*/true);
    else if (cls == "ZeroPadding1D")
      layer = buildZeroPadding1D(c);
    else if (cls == "UpSampling1D")
      layer = UpSampling1D(readSize1(c, "size", 2));
    else if (isRecurrentClass(cls))
      layer = buildRecurrent(c, cls);
    else if (cls == "Bidirectional")
      layer = buildBidirectional(c);
  } catch (const Error &e) {
    // The layer API's own checks, located at this config.
    std::string msg = e.what();
    if (msg.find(c.reader().source()) == 0)
      throw;
    c.fail(msg);
  }
  if (!layer)
    c.fail("layer class '" + cls +
           "' is not supported (kcc imports InputLayer, Dense, Conv2D, "
           "DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, MaxPooling2D, "
           "AveragePooling2D, GlobalAveragePooling2D, "
           "GlobalMaxPooling2D, Flatten, Reshape, ZeroPadding2D, "
           "Cropping2D, UpSampling2D, BatchNormalization, LayerNormalization, "
           "Dropout, "
           "Activation, Softmax, ReLU, "
           "LeakyReLU, PReLU, ELU, Add, Subtract, Multiply, Average, "
           "Maximum, Minimum, Concatenate, Embedding, Conv1D, MaxPooling1D, "
           "AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D, "
           "ZeroPadding1D, UpSampling1D, EinsumDense, MultiHeadAttention, LSTM, "
           "GRU, SimpleRNN and Bidirectional)");
  if (!name.empty())
    layer->named(name);
  return {*layer, c.getBool("trainable", true)};
}
