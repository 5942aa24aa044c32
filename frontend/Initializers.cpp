//===- Initializers.cpp - Keras weight initializers -----------------------===//

#include "frontend/Initializers.h"
#include "runtime/Error.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace kcc;
using namespace kcc::init;

namespace {

/// Keras's truncated-normal correction: the stddev of a standard normal
/// truncated to [-2, 2].
constexpr double kTruncatedStddev = 0.87962566103423978;

/// The names kcc knows and their Keras classes ("" for kcc's own).
struct Known {
  const char *name, *kerasClass;
};
constexpr Known kKnown[] = {
    {"glorot_uniform", "GlorotUniform"},
    {"glorot_normal", "GlorotNormal"},
    {"he_uniform", "HeUniform"},
    {"he_normal", "HeNormal"},
    {"lecun_uniform", "LecunUniform"},
    {"lecun_normal", "LecunNormal"},
    {"orthogonal", "Orthogonal"},
    {"identity", "Identity"},
    {"zeros", "Zeros"},
    {"ones", "Ones"},
    {"constant", "Constant"},
    {"random_normal", "RandomNormal"},
    {"truncated_normal", "TruncatedNormal"},
    {"random_uniform", "RandomUniform"},
    {"variance_scaling", "VarianceScaling"},
    // LSTM's bias with Keras's unit_forget_bias: ones on the forget gate's
    // quarter (i, f, c, o), zeros elsewhere.
    {"unit_forget_bias", ""},
};

const Known *find(llvm::StringRef name) {
  for (const Known &k : kKnown)
    if (name == k.name)
      return &k;
  return nullptr;
}

/// The arguments of `name`, in Keras's get_config() order.
std::vector<const char *> argsOf(llvm::StringRef name) {
  if (name == "random_normal" || name == "truncated_normal")
    return {"mean", "stddev"};
  if (name == "random_uniform")
    return {"minval", "maxval"};
  if (name == "constant")
    return {"value"};
  if (name == "variance_scaling")
    return {"scale", "mode", "distribution"};
  if (name == "identity" || name == "orthogonal")
    return {"gain"};
  return {};
}

double *numberArg(Initializer &init, llvm::StringRef arg) {
  return llvm::StringSwitch<double *>(arg)
      .Case("mean", &init.mean)
      .Case("stddev", &init.stddev)
      .Case("minval", &init.minval)
      .Case("maxval", &init.maxval)
      .Case("value", &init.value)
      .Case("scale", &init.scale)
      .Case("gain", &init.gain)
      .Default(nullptr);
}

std::string *textArg(Initializer &init, llvm::StringRef arg) {
  return arg == "mode"           ? &init.mode
         : arg == "distribution" ? &init.distribution
                                 : nullptr;
}

/// The shortest decimal that reads back as `v` ("0.02", "-1", "1e-07").
std::string formatNumber(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

/// VarianceScaling's arguments of the named initializers.
struct Scaling {
  double scale;
  llvm::StringRef mode, distribution;
};

std::optional<Scaling> scalingOf(const Initializer &init) {
  return llvm::StringSwitch<std::optional<Scaling>>(init.name)
      .Case("glorot_uniform", Scaling{1.0, "fan_avg", "uniform"})
      .Case("glorot_normal", Scaling{1.0, "fan_avg", "truncated_normal"})
      .Case("he_uniform", Scaling{2.0, "fan_in", "uniform"})
      .Case("he_normal", Scaling{2.0, "fan_in", "truncated_normal"})
      .Case("lecun_uniform", Scaling{1.0, "fan_in", "uniform"})
      .Case("lecun_normal", Scaling{1.0, "fan_in", "truncated_normal"})
      .Case("variance_scaling",
            Scaling{init.scale, init.mode, init.distribution})
      .Default(std::nullopt);
}

uint64_t splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) with 53 random bits.
double uniform01(std::mt19937_64 &gen) {
  return static_cast<double>(gen() >> 11) * 0x1.0p-53;
}

/// Standard normal by Box-Muller (one value per pair of draws keeps the
/// stream position independent of previous calls).
double standardNormal(std::mt19937_64 &gen) {
  double u1 = 1.0 - uniform01(gen); // (0, 1], safe for log
  double u2 = uniform01(gen);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

/// Keras's Orthogonal: gain times the Q of a QR factorization of a standard
/// normal [rows, cols] matrix (rows = product of all but the last dim), signs
/// fixed by R's diagonal, transposed when rows < cols. Gram-Schmidt in double
/// gives the same Q.
void orthogonal(NDArray &out, std::mt19937_64 &gen, double gain) {
  int64_t cols = out.shape().empty() ? 1 : out.shape().back();
  int64_t rows = cols ? out.numel() / cols : 0;
  int64_t n = std::max(rows, cols), k = std::min(rows, cols);
  std::vector<double> q(n * k);
  for (double &v : q)
    v = standardNormal(gen);
  // Columns of the n x k matrix q, orthonormalized in turn.
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t i = 0; i < j; ++i) {
      double dot = 0;
      for (int64_t r = 0; r < n; ++r)
        dot += q[r * k + i] * q[r * k + j];
      for (int64_t r = 0; r < n; ++r)
        q[r * k + j] -= dot * q[r * k + i];
    }
    double norm = 0;
    for (int64_t r = 0; r < n; ++r)
      norm += q[r * k + j] * q[r * k + j];
    norm = std::sqrt(norm);
    for (int64_t r = 0; r < n; ++r)
      q[r * k + j] = norm > 0 ? q[r * k + j] / norm : 0.0;
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      out.set(r * cols + c,
              gain * (rows >= cols ? q[r * k + c] : q[c * k + r]));
}

} // namespace

Fans init::computeFans(const Shape &shape) {
  Fans f;
  if (shape.empty())
    return f;
  if (shape.size() == 1) {
    f.in = f.out = static_cast<double>(shape[0]);
    return f;
  }
  double receptive = 1;
  for (size_t i = 0; i + 2 < shape.size(); ++i)
    receptive *= static_cast<double>(shape[i]);
  f.in = static_cast<double>(shape[shape.size() - 2]) * receptive;
  f.out = static_cast<double>(shape.back()) * receptive;
  return f;
}

std::string Initializer::str() const {
  if (name == "random_uniform" && minval == -0.05 && maxval == 0.05)
    return "uniform";
  if (name == "orthogonal" && gain == 1.0)
    return name;
  if (name == "unit_forget_bias")
    return inner.empty() ? name : name + "(" + inner + ")";
  std::vector<const char *> args = argsOf(name);
  if (args.empty())
    return name;
  Initializer copy = *this;
  std::string text = name + "(";
  for (const char *arg : args) {
    if (text.back() != '(')
      text += ",";
    text += std::string(arg) + "=";
    if (double *v = numberArg(copy, arg))
      text += formatNumber(*v);
    else
      text += *textArg(copy, arg);
  }
  return text + ")";
}

std::string init::normalize(Initializer &init) {
  if (!find(init.name))
    return "unknown initializer '" + init.name + "' (expected " +
           supportedNames() + ")";
  init.distribution = llvm::StringRef(init.distribution).lower();
  // Keras's VarianceScaling takes "normal" for truncated_normal.
  if (init.distribution == "normal")
    init.distribution = "truncated_normal";
  for (const char *arg : argsOf(init.name))
    if (double *v = numberArg(init, arg); v && !std::isfinite(*v))
      return init.name + "'s " + arg + " must be a finite number";
  if (init.name == "variance_scaling") {
    if (!(init.scale > 0))
      return "variance_scaling's scale must be positive, got " +
             formatNumber(init.scale);
    if (init.mode != "fan_in" && init.mode != "fan_out" &&
        init.mode != "fan_avg")
      return "variance_scaling's mode '" + init.mode +
             "' is not one of fan_in, fan_out, fan_avg";
    if (init.distribution != "truncated_normal" &&
        init.distribution != "untruncated_normal" &&
        init.distribution != "uniform")
      return "variance_scaling's distribution '" + init.distribution +
             "' is not one of truncated_normal, untruncated_normal, uniform";
  }
  return "";
}

std::optional<Initializer> init::parse(const std::string &text,
                                       std::string *error) {
  auto fail = [&](const std::string &why) -> std::optional<Initializer> {
    if (error)
      *error = why;
    return std::nullopt;
  };
  llvm::StringRef t = llvm::StringRef(text).trim();
  auto [base, rest] = t.split('(');
  base = base.trim();
  Initializer init;
  init.name = base == "uniform" ? "random_uniform" : base.str();
  if (!find(init.name))
    return fail("unknown initializer '" + text + "' (expected " +
                supportedNames() + ")");
  if (init.name == "unit_forget_bias" && t.contains('(')) {
    // LSTM's bias around another initializer: "unit_forget_bias(<text>)".
    rest = rest.rtrim();
    std::string why;
    std::optional<Initializer> inner;
    if (rest.consume_back(")"))
      inner = parse(rest.str(), &why);
    if (!inner || inner->name == "unit_forget_bias")
      return fail("initializer '" + text +
                  "' is malformed (expected "
                  "unit_forget_bias(<initializer>))" +
                  (why.empty() ? "" : ": " + why));
    init.inner = inner->name == "zeros" ? "" : inner->str();
  } else if (t.contains('(')) {
    rest = rest.rtrim();
    if (!rest.consume_back(")") || rest.contains('(') || rest.contains(')'))
      return fail("initializer '" + text +
                  "' is malformed (expected name(arg=value,...))");
    std::vector<const char *> args = argsOf(init.name);
    std::vector<llvm::StringRef> seen;
    llvm::SmallVector<llvm::StringRef, 4> parts;
    if (!rest.trim().empty())
      rest.split(parts, ',');
    for (llvm::StringRef part : parts) {
      auto [key, value] = part.split('=');
      key = key.trim();
      value = value.trim();
      if (!llvm::is_contained(args, key))
        return fail("initializer '" + text + "': " + init.name +
                    (args.empty()
                         ? " takes no arguments"
                         : " has no argument '" + key.str() + "' (it takes " +
                               llvm::join(args, ", ") + ")"));
      if (llvm::is_contained(seen, key))
        return fail("initializer '" + text + "': '" + key.str() +
                    "' is given twice");
      seen.push_back(key);
      if (double *v = numberArg(init, key)) {
        std::string s = value.str();
        char *end = nullptr;
        *v = std::strtod(s.c_str(), &end);
        if (s.empty() || *end != '\0')
          return fail("initializer '" + text + "': '" + key.str() +
                      "' must be a number, got '" + s + "'");
      } else {
        *textArg(init, key) = value.str();
      }
    }
  }
  if (std::string why = normalize(init); !why.empty())
    return fail("initializer '" + text + "': " + why);
  return init;
}

std::string init::supportedNames() {
  return "glorot_uniform, glorot_normal, he_uniform, he_normal, "
         "lecun_uniform, lecun_normal, orthogonal, identity, random_normal, "
         "truncated_normal, random_uniform (uniform), variance_scaling, "
         "constant, zeros or ones";
}

std::string init::kerasClassName(const std::string &name) {
  const Known *k = find(name == "uniform" ? "random_uniform" : name);
  return k ? k->kerasClass : "";
}

std::string init::fromKerasName(const std::string &kerasName) {
  // keras.initializers.ALL_OBJECTS_DICT: the classes, their snake_case
  // names, and the aliases.
  std::string alias = llvm::StringSwitch<std::string>(kerasName)
                          .Case("IdentityInitializer", "identity")
                          .Case("OrthogonalInitializer", "orthogonal")
                          .Case("normal", "random_normal")
                          .Case("uniform", "random_uniform")
                          .Case("zero", "zeros")
                          .Case("one", "ones")
                          .Default("");
  if (!alias.empty())
    return alias;
  for (const Known &k : kKnown)
    if (*k.kerasClass && (kerasName == k.kerasClass || kerasName == k.name))
      return k.name;
  return "";
}

std::string init::supportedKerasClasses() {
  return "GlorotUniform, GlorotNormal, HeUniform, HeNormal, LecunUniform, "
         "LecunNormal, Orthogonal, Identity, RandomNormal, TruncatedNormal, "
         "RandomUniform, VarianceScaling, Constant, Zeros or Ones";
}

bool init::isInitializer(const std::string &text) {
  return parse(text).has_value();
}

uint64_t init::deriveSeed(uint64_t seed, const std::string &stream) {
  // FNV-1a of the stream name, mixed with the seed.
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : stream)
    h = (h ^ c) * 0x100000001b3ull;
  return splitmix(splitmix(seed) ^ h);
}

NDArray init::initialize(const std::string &name, const Shape &shape,
                         DType dtype, uint64_t seed,
                         const std::string &stream) {
  std::string why;
  std::optional<Initializer> parsed = parse(name, &why);
  if (!parsed)
    throw Error(why + " for " + stream);
  const Initializer &init = *parsed;
  if (!isFloat(dtype))
    throw Error("initializer '" + name + "' for " + stream +
                " needs a float dtype, got " + dtypeName(dtype));
  if (init.name == "identity" && shape.size() != 2)
    throw Error("initializer '" + name + "' for " + stream +
                " needs a 2-D weight (Keras's Identity), got " +
                shapeToString(shape));
  NDArray out = NDArray::empty(shape, dtype);
  int64_t n = out.numel();
  if (init.name == "zeros" || init.name == "ones" || init.name == "constant") {
    double v = init.name == "zeros"  ? 0.0
               : init.name == "ones" ? 1.0
                                     : init.value;
    for (int64_t i = 0; i < n; ++i)
      out.set(i, v);
    return out;
  }
  if (init.name == "unit_forget_bias") {
    // Keras's LSTMCell: concatenate(init([units]), ones([units]),
    // init([2 * units])), the two draws on streams of their own.
    NDArray first, last;
    if (!init.inner.empty()) {
      first = initialize(init.inner, {n / 4}, dtype, seed, stream);
      last = initialize(init.inner, {n - n / 2}, dtype, seed,
                        stream + "#forget_bias_rest");
    }
    for (int64_t i = 0; i < n; ++i)
      out.set(i, i >= n / 4 && i < n / 2 ? 1.0
                 : init.inner.empty()    ? 0.0
                 : i < n / 4             ? first.at(i)
                                         : last.at(i - n / 2));
    return out;
  }
  if (init.name == "identity") {
    int64_t cols = shape[1];
    for (int64_t i = 0; i < n; ++i)
      out.set(i, i / cols == i % cols ? init.gain : 0.0);
    return out;
  }
  std::mt19937_64 gen(deriveSeed(seed, stream));
  if (init.name == "orthogonal") {
    orthogonal(out, gen, init.gain);
    return out;
  }
  auto uniform = [&](double lo, double hi) {
    // The symmetric range keeps the form kcc's "uniform" always drew with.
    for (int64_t i = 0; i < n; ++i)
      out.set(i, lo == -hi ? (2.0 * uniform01(gen) - 1.0) * hi
                           : lo + (hi - lo) * uniform01(gen));
  };
  auto normal = [&](double mean, double stddev, bool truncated) {
    for (int64_t i = 0; i < n; ++i) {
      double z = standardNormal(gen);
      while (truncated && std::abs(z) > 2.0)
        z = standardNormal(gen);
      // mean + z * stddev, but a zero mean keeps the sign of -0.0 as the
      // named initializers always drew it.
      out.set(i, mean == 0.0 ? z * stddev : mean + z * stddev);
    }
  };
  if (init.name == "random_uniform") {
    uniform(init.minval, init.maxval);
    return out;
  }
  if (init.name == "random_normal" || init.name == "truncated_normal") {
    normal(init.mean, init.stddev, init.name == "truncated_normal");
    return out;
  }
  std::optional<Scaling> s = scalingOf(init);
  if (!s)
    throw Error("initializer '" + name + "' has no draw (" + stream + ")");
  Fans fans = computeFans(shape);
  double fan = s->mode == "fan_in"    ? fans.in
               : s->mode == "fan_out" ? fans.out
                                      : (fans.in + fans.out) / 2;
  double variance = s->scale / std::max(1.0, fan);
  if (s->distribution == "uniform") {
    double limit = std::sqrt(3.0 * variance);
    uniform(-limit, limit);
  } else if (s->distribution == "untruncated_normal") {
    normal(0.0, std::sqrt(variance), /*truncated=*/false);
  } else {
    normal(0.0, std::sqrt(variance) / kTruncatedStddev, /*truncated=*/true);
  }
  return out;
}
