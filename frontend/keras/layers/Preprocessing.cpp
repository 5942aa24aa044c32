//===- Preprocessing.cpp - Keras's preprocessing layers -------------------===//
//
// Rescaling, Normalization, Resizing, CenterCrop and the augmentation
// layers RandomFlip, RandomBrightness, RandomContrast, RandomRotation,
// RandomZoom, RandomTranslation and RandomCrop
// (keras/src/layers/preprocessing/):
// preprocessing that is part of the model, traced into the step like any
// other layer.
//
//===----------------------------------------------------------------------===//

#include "frontend/keras/ConfigReaders.h"
#include "frontend/keras/LayerRegistry.h"

#include <algorithm>
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

/// The list inside Keras's serialized tuple, or `v` itself.
const json::Value *untupled(const json::Value *v) {
  if (const json::Object *o = v ? v->getAsObject() : nullptr)
    if (o->getString("class_name") == llvm::StringRef("__tuple__"))
      if (const json::Object *config = o->getObject("config"))
        return config->get("value");
  return v;
}

/// Normalization's axis: an int, a list or tuple of ints, or null (no axis
/// kept).
std::vector<int64_t> readAxes(const ObjectView &c) {
  const json::Value *v = untupled(c.get("axis"));
  if (!v)
    return {-1};
  if (v->getAsNull())
    return {};
  if (std::optional<int64_t> one = v->getAsInteger())
    return {*one};
  std::vector<int64_t> axes;
  if (const json::Array *a = v->getAsArray())
    for (const json::Value &e : *a) {
      std::optional<int64_t> n = e.getAsInteger();
      if (!n)
        c.failField("axis", "'axis' must hold integers only");
      axes.push_back(*n);
    }
  else
    c.failField("axis", "'axis' must be an integer, a list of them or null");
  return axes;
}

/// A number or nested lists of numbers (numpy's tolist()): its shape and
/// row-major values. False when ragged or not numeric.
bool readNested(const json::Value &v, size_t depth, Shape &shape,
                std::vector<double> &values) {
  if (std::optional<double> n = v.getAsNumber()) {
    if (depth != shape.size() && !(values.empty() && shape.empty()))
      return false;
    values.push_back(*n);
    return true;
  }
  const json::Array *a = v.getAsArray();
  if (!a)
    return false;
  if (values.empty() && shape.size() == depth)
    shape.push_back(static_cast<int64_t>(a->size()));
  if (depth >= shape.size() || shape[depth] != static_cast<int64_t>(a->size()))
    return false;
  for (const json::Value &e : *a)
    if (!readNested(e, depth + 1, shape, values))
      return false;
  return true;
}

/// Normalization's mean and variance when the config gives them (null
/// when it was adapted: the statistics are then weights).
NormalizationStatistics readStatistics(const ObjectView &c) {
  NormalizationStatistics s;
  const json::Value *mean = c.get("mean"), *variance = c.get("variance");
  bool hasMean = mean && !mean->getAsNull();
  bool hasVariance = variance && !variance->getAsNull();
  if (hasMean != hasVariance)
    c.failField(hasMean ? "variance" : "mean",
                "'mean' and 'variance' must both be given or both be null");
  if (!hasMean)
    return s;
  Shape varianceShape;
  if (!readNested(*mean, 0, s.shape, s.mean))
    c.failField("mean", "'mean' must be a number or nested lists of numbers");
  if (!readNested(*variance, 0, varianceShape, s.variance))
    c.failField("variance",
                "'variance' must be a number or nested lists of numbers");
  if (varianceShape != s.shape)
    c.failField("variance", "'variance' " + shapeToString(varianceShape) +
                                " must have the shape of 'mean' " +
                                shapeToString(s.shape));
  for (double v : s.variance)
    if (!(v >= 0) || !std::isfinite(v))
      c.failField("variance", "'variance' must be finite and >= 0");
  for (double v : s.mean)
    if (!std::isfinite(v))
      c.failField("mean", "'mean' must be finite");
  return s;
}

/// Resizing's and CenterCrop's height or width.
int64_t readImageSize(const ObjectView &c, llvm::StringRef key) {
  int64_t n = c.getInt(key);
  if (n <= 0 || n > (int64_t(1) << 24))
    c.failField(key,
                "'" + key + "' must be in [1, 2^24], got " + std::to_string(n));
  return n;
}

Layer buildResizing(const ObjectView &c) {
  checkChannelsLast(c);
  std::string interpolation = c.getString("interpolation", "bilinear");
  if (interpolation != "bilinear" && interpolation != "nearest")
    c.failField("interpolation", "interpolation '" + interpolation +
                                     "' is not supported (bilinear, nearest)");
  if (c.getBool("pad_to_aspect_ratio", false))
    c.failField("pad_to_aspect_ratio",
                "pad_to_aspect_ratio is not supported (crop_to_aspect_ratio "
                "is)");
  if (c.getBool("antialias", false))
    c.failField("antialias", "antialias is not supported");
  return Resizing(readImageSize(c, "height"), readImageSize(c, "width"),
                  interpolation, c.getBool("crop_to_aspect_ratio", false));
}

/// A seed: null (kcc's 0, a stream derived from the model's seed) or a
/// non-negative integer.
uint64_t readSeed(const ObjectView &c) {
  const json::Value *v = c.get("seed");
  if (!v || v->getAsNull())
    return 0;
  std::optional<int64_t> n = v->getAsInteger();
  if (!n || *n < 0)
    c.failField("seed", "'seed' must be null or a non-negative integer");
  return static_cast<uint64_t>(*n);
}

/// A pair of numbers: a list or Keras's serialized tuple.
std::optional<std::pair<double, double>> readPair(const ObjectView &c,
                                                  llvm::StringRef key) {
  const json::Value *v = untupled(c.get(key));
  const json::Array *a = v ? v->getAsArray() : nullptr;
  if (!a || a->size() != 2 || !(*a)[0].getAsNumber() || !(*a)[1].getAsNumber())
    return std::nullopt;
  return std::make_pair(*(*a)[0].getAsNumber(), *(*a)[1].getAsNumber());
}

/// An augmentation's factor as Keras's _set_factor reads it: a pair in
/// [bound, 1] (sorted), or a number f giving [max(-f, bound), f].
std::pair<double, double> readFactor(const ObjectView &c, double bound,
                                     llvm::StringRef key = "factor") {
  const json::Value *v = c.get(key);
  std::string bounds = "[" + std::to_string(static_cast<int>(bound)) + ", 1]";
  if (!v)
    c.failField(key, "missing required field '" + key + "'");
  if (std::optional<double> f = v->getAsNumber()) {
    if (!(*f >= bound && *f <= 1))
      c.failField(key, "'" + key + "' must be in " + bounds);
    double m = std::fabs(*f);
    return {std::max(-m, bound), m};
  }
  std::optional<std::pair<double, double>> p = readPair(c, key);
  if (!p)
    c.failField(key, "'" + key + "' must be a number or a pair of numbers");
  auto [lo, hi] = std::minmax(p->first, p->second);
  if (lo > 1 || hi < bound)
    c.failField(key, "'" + key + "' must lie in " + bounds);
  return {lo, hi};
}

/// [low, high] of a value_range (default [0, 255]).
std::pair<double, double> readValueRange(const ObjectView &c) {
  if (!c.get("value_range"))
    return {0.0, 255.0};
  std::optional<std::pair<double, double>> p = readPair(c, "value_range");
  if (!p || !(p->first < p->second) || !std::isfinite(p->first) ||
      !std::isfinite(p->second))
    c.failField("value_range",
                "'value_range' must be [low, high] with low < high");
  return *p;
}

/// RandomBrightness, RandomInvert, RandomColorDegeneration, RandomSaturation
/// (factor bound -1), RandomContrast, RandomHue and RandomSharpness (0).
template <typename L> Layer buildRanged(const ObjectView &c, double bound) {
  checkChannelsLast(c);
  auto [lower, upper] = readFactor(c, bound);
  auto [low, high] = readValueRange(c);
  return L(lower, upper, low, high, readSeed(c));
}

/// RandomZoom's and RandomTranslation's height_factor or width_factor as
/// their _set_factor reads it: a number f gives (-|f|, |f|), a pair is
/// sorted; every number in [-1, 1] (above -1 when `openBelow`).
std::pair<double, double> readAxisFactor(const ObjectView &c,
                                         llvm::StringRef key, bool openBelow) {
  auto check = [&](double v) {
    if (!std::isfinite(v) || v > 1 || (openBelow ? v <= -1 : v < -1))
      c.failField(key, "'" + key + "' must be in " +
                           (openBelow ? "(-1, 1]" : "[-1, 1]") + ", got " +
                           std::to_string(v));
  };
  const json::Value *v = c.get(key);
  if (!v)
    c.failField(key, "missing required field '" + key + "'");
  if (std::optional<double> f = v->getAsNumber()) {
    check(*f);
    return {-std::fabs(*f), std::fabs(*f)};
  }
  std::optional<std::pair<double, double>> p = readPair(c, key);
  if (!p)
    c.failField(key, "'" + key + "' must be a number or a pair of numbers");
  check(p->first);
  check(p->second);
  return std::minmax(p->first, p->second);
}

/// fill_mode, interpolation and fill_value of the geometric augmentations.
ImageFill readImageFill(const ObjectView &c) {
  ImageFill f;
  f.fillMode = c.getString("fill_mode", "reflect");
  if (f.fillMode != "reflect" && f.fillMode != "wrap" &&
      f.fillMode != "constant" && f.fillMode != "nearest")
    c.failField("fill_mode", "fill_mode '" + f.fillMode +
                                 "' is not one of reflect, wrap, constant, "
                                 "nearest");
  f.interpolation = c.getString("interpolation", "bilinear");
  if (f.interpolation != "bilinear" && f.interpolation != "nearest")
    c.failField("interpolation", "interpolation '" + f.interpolation +
                                     "' is not one of bilinear, nearest");
  f.fillValue = c.getNumber("fill_value", 0.0);
  if (!std::isfinite(f.fillValue))
    c.failField("fill_value", "'fill_value' must be finite");
  return f;
}

Layer buildRandomZoom(const ObjectView &c) {
  checkChannelsLast(c);
  auto [hl, hu] = readAxisFactor(c, "height_factor", /*openBelow=*/true);
  std::optional<std::pair<double, double>> width;
  if (c.get("width_factor"))
    width = readAxisFactor(c, "width_factor", /*openBelow=*/true);
  return RandomZoom(hl, hu, width, readImageFill(c), readSeed(c));
}

/// RandomShear's x_factor or y_factor: a number f in [0, 1] gives (-f,
/// f), a pair is sorted; absent, 0. Keras's constructor wants a pair's
/// entries in [0, 1], but its get_config writes the (-f, f) of a number,
/// so a pair may hold any entries in [-1, 1].
std::pair<double, double> readShearFactor(const ObjectView &c,
                                          llvm::StringRef key) {
  const json::Value *v = c.get(key);
  if (!v)
    return {0.0, 0.0};
  auto check = [&](double f, double lo) {
    if (!(f >= lo && f <= 1))
      c.failField(key, "'" + key + "' must be in [" +
                           std::to_string(static_cast<int>(lo)) + ", 1], got " +
                           std::to_string(f));
  };
  if (std::optional<double> f = v->getAsNumber()) {
    check(*f, 0);
    return {-*f, *f};
  }
  std::optional<std::pair<double, double>> p = readPair(c, key);
  if (!p)
    c.failField(key, "'" + key + "' must be a number or a pair of numbers");
  check(p->first, -1);
  check(p->second, -1);
  return std::minmax(p->first, p->second);
}

Layer buildRandomTranslation(const ObjectView &c) {
  checkChannelsLast(c);
  auto [hl, hu] = readAxisFactor(c, "height_factor", /*openBelow=*/false);
  auto [wl, wu] = readAxisFactor(c, "width_factor", /*openBelow=*/false);
  return RandomTranslation(hl, hu, wl, wu, readImageFill(c), readSeed(c));
}

} // namespace

namespace {

std::string readOutputMode(const ObjectView &c, llvm::StringRef dflt,
                           bool intAllowed) {
  if (c.getBool("sparse", false))
    c.failField("sparse", "sparse: true is not supported (kcc's outputs are "
                          "dense)");
  std::string mode = c.getString("output_mode", dflt);
  if (mode == "binary") // Keras's former name
    mode = "multi_hot";
  if (mode != "one_hot" && mode != "multi_hot" && mode != "count" &&
      !(intAllowed && mode == "int"))
    c.failField("output_mode", "output_mode '" + mode + "' is not supported (" +
                                   (intAllowed ? "int, " : "") +
                                   "one_hot, multi_hot or count)");
  return mode;
}

Layer buildCategoryEncoding(const ObjectView &c) {
  int64_t tokens = c.getInt("num_tokens");
  if (tokens < 1 || tokens > (int64_t(1) << 24))
    c.failField("num_tokens", "'num_tokens' must be in [1, 2^24], got " +
                                  std::to_string(tokens));
  return CategoryEncoding(tokens, readOutputMode(c, "multi_hot", false));
}

Layer buildDiscretization(const ObjectView &c) {
  const json::Value *b = c.get("bin_boundaries");
  if (!b || b->kind() == json::Value::Null)
    c.failField("bin_boundaries", "a Discretization needs its "
                                  "'bin_boundaries' (an adapted layer saves "
                                  "them; num_bins alone is not adapted)");
  std::vector<double> bounds = readScalarOrList(c, "bin_boundaries", 0.0);
  if (bounds.empty() || bounds.size() >= (size_t(1) << 24))
    c.failField("bin_boundaries", "'bin_boundaries' must hold 1 to 2^24 - 1 "
                                  "values");
  for (size_t i = 0; i < bounds.size(); ++i)
    if (!std::isfinite(bounds[i]) || (i && bounds[i] < bounds[i - 1]))
      c.failField("bin_boundaries",
                  "'bin_boundaries' must be finite and sorted");
  return Discretization(bounds, readOutputMode(c, "int", true));
}

} // namespace

void keras::addPreprocessingLayers(std::vector<LayerClass> &classes) {
  classes.push_back({"CategoryEncoding",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildCategoryEncoding(c);
                     },
                     {},
                     {},
                     "`num_tokens`, `output_mode` (one_hot, multi_hot, "
                     "count); integer or float ids"});
  classes.push_back({"Discretization",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildDiscretization(c);
                     },
                     {},
                     {},
                     "`bin_boundaries` (given or adapted), `output_mode` "
                     "(int: int32 buckets, one_hot, multi_hot, count)"});
  // Its own get_config has no base keys; its constructor refuses this one.
  classes.back().omittedKeys = {"trainable"};
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
  classes.push_back({"Normalization",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return Layer(Normalization(readAxes(c),
                                                  readStatistics(c),
                                                  c.getBool("invert", false)));
                     },
                     {},
                     {},
                     "`axis` (int, list or null), `invert`; `mean` and "
                     "`variance` given, or adapted (weights)"});
  classes.push_back({"Resizing",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildResizing(c);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`height`, `width`, `interpolation` (bilinear, nearest), "
                     "`crop_to_aspect_ratio`; as JAX resizes"});
  classes.push_back({"CenterCrop",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       return Layer(CenterCrop(readImageSize(c, "height"),
                                               readImageSize(c, "width")));
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`height`, `width`; smaller images resized as Keras's "
                     "smart_resize"});
  classes.push_back({"RandomFlip",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       std::string mode =
                           c.getString("mode", "horizontal_and_vertical");
                       if (mode != "horizontal" && mode != "vertical" &&
                           mode != "horizontal_and_vertical")
                         c.failField("mode", "mode '" + mode +
                                                 "' is not one of horizontal, "
                                                 "vertical, "
                                                 "horizontal_and_vertical");
                       return Layer(RandomFlip(mode, readSeed(c)));
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`mode`, `seed`; random in training, as Keras draws "
                     "(its own stream)"});
  classes.push_back({"RandomBrightness",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomBrightness>(c, -1.0);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`factor`, `value_range`, `seed`; random in training"});
  classes.push_back({"RandomContrast",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomContrast>(c, 0.0);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`factor`, `value_range`, `seed`; random in training"});
  classes.push_back({"RandomGrayscale",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       double factor = c.getNumber("factor", 0.5);
                       if (!(factor >= 0 && factor <= 1))
                         c.failField("factor",
                                     "'factor' must be in [0, 1], got " +
                                         std::to_string(factor));
                       return Layer(RandomGrayscale(factor, readSeed(c)));
                     },
                     {},
                     {},
                     "`factor` (the probability); random in training"});
  classes.push_back(
      {"Solarization",
       "preprocessing",
       [](const ObjectView &c, const CallOptions &) {
         checkChannelsLast(c);
         // Solarization's _set_factor: a number f is (0, f), a pair is
         // sorted; every number in [0, 1].
         auto factor = [&](llvm::StringRef key) {
           std::pair<double, double> f{0.0, 0.0};
           if (const json::Value *v = c.get(key)) {
             if (std::optional<double> n = v->getAsNumber())
               f = {0.0, *n};
             else if (std::optional<std::pair<double, double>> p =
                          readPair(c, key))
               f = std::minmax(p->first, p->second);
             else
               c.failField(key, "'" + key.str() +
                                    "' must be a number or a pair of numbers");
           }
           if (!(f.first >= 0 && f.second <= 1))
             c.failField(key, "'" + key.str() + "' must lie in [0, 1]");
           return f;
         };
         auto [low, high] = readValueRange(c);
         return Layer(Solarization(factor("addition_factor"),
                                   factor("threshold_factor"), low, high,
                                   readSeed(c)));
       },
       {},
       {},
       "`addition_factor`, `threshold_factor`, `value_range`, `seed`; random "
       "in training (the default threshold inverts every image)"});
  classes.push_back({"RandomColorDegeneration",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomColorDegeneration>(c, -1.0);
                     },
                     {},
                     {},
                     "`factor`, `value_range`, `seed`; random in training"});
  classes.push_back({"RandomSaturation",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomSaturation>(c, -1.0);
                     },
                     {},
                     {},
                     "`factor`, `value_range`, `seed`; random in training "
                     "(RGB)"});
  classes.push_back({"RandomHue",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomHue>(c, 0.0);
                     },
                     {},
                     {},
                     "`factor`, `value_range`, `seed`; random in training "
                     "(RGB)"});
  classes.push_back(
      {"RandomColorJitter",
       "preprocessing",
       [](const ObjectView &c, const CallOptions &) {
         checkChannelsLast(c);
         // Each part's factor as its own layer reads it (bounds -1, 0, -1,
         // 0); null or absent skips the part.
         auto part =
             [&](llvm::StringRef key,
                 double bound) -> std::optional<std::pair<double, double>> {
           const json::Value *v = c.get(key);
           if (!v || v->kind() == json::Value::Null)
             return std::nullopt;
           return readFactor(c, bound, key);
         };
         ColorJitterFactors f;
         f.brightness = part("brightness_factor", -1.0);
         f.contrast = part("contrast_factor", 0.0);
         f.saturation = part("saturation_factor", -1.0);
         f.hue = part("hue_factor", 0.0);
         auto [low, high] = readValueRange(c);
         return Layer(RandomColorJitter(f, low, high, readSeed(c)));
       },
       {},
       {},
       "`value_range`, `brightness_factor`, `contrast_factor`, "
       "`saturation_factor`, `hue_factor`, `seed`; random in training"});
  classes.push_back({"AutoContrast",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       auto [low, high] = readValueRange(c);
                       return Layer(AutoContrast(low, high));
                     },
                     {},
                     {},
                     "`value_range`; applied at inference too"});
  classes.push_back({"RandomSharpness",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomSharpness>(c, 0.0);
                     },
                     {},
                     {},
                     "`factor`, `value_range`, `seed`; random in training"});
  classes.push_back({"RandomShear",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       return Layer(RandomShear(readShearFactor(c, "x_factor"),
                                                readShearFactor(c, "y_factor"),
                                                readImageFill(c), readSeed(c)));
                     },
                     {},
                     {},
                     "`x_factor`, `y_factor`, `fill_mode`, `interpolation`, "
                     "`fill_value`, `seed`; random in training"});
  classes.push_back(
      {"RandomGaussianBlur",
       "preprocessing",
       [](const ObjectView &c, const CallOptions &) {
         checkChannelsLast(c);
         // Keras's defaults: factor 1.0 and sigma 1.0, each (0, 1).
         auto pairOr = [&](llvm::StringRef key) {
           return c.get(key) ? readFactor(c, 0.0, key)
                             : std::pair<double, double>{0.0, 1.0};
         };
         std::pair<int64_t, int64_t> kernel{3, 3};
         if (const json::Value *v = c.get("kernel_size")) {
           auto odd = [&](double k) {
             if (!(k >= 1 && k <= (1 << 20) && k == std::floor(k) &&
                   static_cast<int64_t>(k) % 2 == 1))
               c.failField("kernel_size",
                           "'kernel_size' must be odd and positive, got " +
                               std::to_string(k));
             return static_cast<int64_t>(k);
           };
           if (std::optional<double> k = v->getAsNumber()) {
             kernel = {odd(*k), odd(*k)};
           } else if (std::optional<std::pair<double, double>> p =
                          readPair(c, "kernel_size")) {
             kernel = {odd(p->first), odd(p->second)};
           } else {
             c.failField("kernel_size", "'kernel_size' must be a number or a "
                                        "pair of numbers");
           }
         }
         auto [low, high] = readValueRange(c);
         return Layer(RandomGaussianBlur(pairOr("factor"), kernel,
                                         pairOr("sigma"), low, high,
                                         readSeed(c)));
       },
       {},
       {},
       "`factor`, `kernel_size`, `sigma`, `value_range`, `seed`; random in "
       "training"});
  classes.push_back(
      {"RandomPosterization",
       "preprocessing",
       [](const ObjectView &c, const CallOptions &) {
         checkChannelsLast(c);
         // Keras's _set_factor with bounds (1, 8): f gives (1, f).
         const json::Value *v = c.get("factor");
         if (!v)
           c.failField("factor", "missing required field 'factor'");
         std::pair<double, double> f;
         if (std::optional<double> n = v->getAsNumber())
           f = {1.0, *n};
         else if (std::optional<std::pair<double, double>> p =
                      readPair(c, "factor"))
           f = std::minmax(p->first, p->second);
         else
           c.failField("factor",
                       "'factor' must be a number or a pair of numbers");
         auto [lower, upper] = f;
         auto bits = [&](double b) {
           if (!(b >= 1 && b <= 8 && b == std::floor(b)))
             c.failField("factor",
                         "'factor' must hold bit counts in [1, 8], got " +
                             std::to_string(b));
           return static_cast<int64_t>(b);
         };
         auto [low, high] = readValueRange(c);
         return Layer(RandomPosterization(bits(lower), bits(upper), low, high,
                                          readSeed(c)));
       },
       {},
       {},
       "`factor` (bits), `value_range`, `seed`; random in training"});
  classes.push_back(
      {"RandomErasing",
       "preprocessing",
       [](const ObjectView &c, const CallOptions &) {
         checkChannelsLast(c);
         // Keras's defaults: factor 1.0 ((0, 1)), scale (0.02, 0.33).
         auto pairOr = [&](llvm::StringRef key, std::pair<double, double> d) {
           return c.get(key) ? readFactor(c, 0.0, key) : d;
         };
         std::vector<double> fill;
         const json::Value *v = c.get("fill_value");
         if (v && v->kind() != json::Value::Null) {
           if (std::optional<double> f = v->getAsNumber()) {
             fill = {*f};
           } else {
             const json::Array *a = v->getAsArray();
             if (a && a->size() == 3)
               for (const json::Value &e : *a)
                 if (std::optional<double> f = e.getAsNumber())
                   fill.push_back(*f);
             if (fill.size() != 3)
               c.failField("fill_value", "'fill_value' must be null, a "
                                         "number or three numbers");
           }
         }
         auto [low, high] = readValueRange(c);
         return Layer(RandomErasing(pairOr("factor", {0.0, 1.0}),
                                    pairOr("scale", {0.02, 0.33}),
                                    std::move(fill), low, high, readSeed(c)));
       },
       {},
       {},
       "`factor`, `scale`, `fill_value` (null: noise), `value_range`, "
       "`seed`; random in training"});
  classes.push_back({"RandomInvert",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRanged<RandomInvert>(c, -1.0);
                     },
                     {},
                     {},
                     "`factor`, `value_range`, `seed`; random in training"});
  classes.push_back({"RandomRotation",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       auto [lower, upper] = readFactor(c, -1.0);
                       return Layer(RandomRotation(
                           lower, upper, readImageFill(c), readSeed(c)));
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`factor`, `fill_mode` (reflect, wrap, constant, "
                     "nearest), `interpolation` (bilinear, nearest), "
                     "`fill_value`, `seed`; random in training"});
  classes.push_back({"RandomZoom",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRandomZoom(c);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`height_factor`, `width_factor` (or null), "
                     "`fill_mode`, `interpolation`, `fill_value`, `seed`; "
                     "random in training"});
  classes.push_back({"RandomTranslation",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       return buildRandomTranslation(c);
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`height_factor`, `width_factor`, `fill_mode`, "
                     "`interpolation`, `fill_value`, `seed`; random in "
                     "training"});
  classes.push_back({"RandomCrop",
                     "preprocessing",
                     [](const ObjectView &c, const CallOptions &) {
                       checkChannelsLast(c);
                       return Layer(RandomCrop(readImageSize(c, "height"),
                                               readImageSize(c, "width"),
                                               readSeed(c)));
                     },
                     {},
                     {{"data_format", "channels_last"}},
                     "`height`, `width`, `seed`; a random window in "
                     "training (smaller images: centred crop resized), the "
                     "identity at inference as Keras 3"});
}
