//===- Initializers.cpp - Keras weight initializers -----------------------===//

#include "frontend/Initializers.h"
#include "runtime/Error.h"

#include <cmath>
#include <algorithm>
#include <random>
#include <vector>

using namespace kcc;
using namespace kcc::init;

namespace {

/// Keras's truncated-normal correction: the stddev of a standard normal
/// truncated to [-2, 2].
constexpr double kTruncatedStddev = 0.87962566103423978;

struct Spec {
  enum Dist {
    Uniform, Normal, Constant, FixedUniform, Orthogonal, UnitForgetBias
  } dist;
  /// VarianceScaling scale and mode, the constant, or FixedUniform's limit.
  double scale;
  enum Mode { FanIn, FanAvg } mode;
};

bool lookup(const std::string &name, Spec &spec) {
  if (name == "glorot_uniform")
    spec = {Spec::Uniform, 1.0, Spec::FanAvg};
  else if (name == "glorot_normal")
    spec = {Spec::Normal, 1.0, Spec::FanAvg};
  else if (name == "he_uniform")
    spec = {Spec::Uniform, 2.0, Spec::FanIn};
  else if (name == "he_normal")
    spec = {Spec::Normal, 2.0, Spec::FanIn};
  else if (name == "lecun_uniform")
    spec = {Spec::Uniform, 1.0, Spec::FanIn};
  else if (name == "lecun_normal")
    spec = {Spec::Normal, 1.0, Spec::FanIn};
  else if (name == "zeros")
    spec = {Spec::Constant, 0.0, Spec::FanIn};
  else if (name == "ones")
    spec = {Spec::Constant, 1.0, Spec::FanIn};
  else if (name == "orthogonal")
    spec = {Spec::Orthogonal, 1.0, Spec::FanIn};
  else if (name == "unit_forget_bias")
    // LSTM's bias with Keras's unit_forget_bias: ones on the forget gate's
    // quarter (i, f, c, o), zeros elsewhere.
    spec = {Spec::UnitForgetBias, 0.0, Spec::FanIn};
  else if (name == "uniform" || name == "random_uniform")
    // Keras's RandomUniform defaults (Embedding's "uniform"): [-0.05, 0.05).
    spec = {Spec::FixedUniform, 0.05, Spec::FanIn};
  else
    return false;
  return true;
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

/// Keras's Orthogonal: the Q of a QR factorization of a standard normal
/// [rows, cols] matrix (rows = product of all but the last dim), signs fixed
/// by R's diagonal, transposed when rows < cols. Gram-Schmidt in double
/// gives the same Q.
void orthogonal(NDArray &out, std::mt19937_64 &gen) {
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
      out.set(r * cols + c, rows >= cols ? q[r * k + c] : q[c * k + r]);
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

bool init::isInitializer(const std::string &name) {
  Spec s;
  return lookup(name, s);
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
  Spec spec;
  if (!lookup(name, spec))
    throw Error("unknown initializer '" + name + "' for " + stream +
                " (expected glorot_uniform, glorot_normal, he_uniform, "
                "he_normal, lecun_uniform, lecun_normal, orthogonal, uniform, "
                "zeros or ones)");
  if (!isFloat(dtype))
    throw Error("initializer '" + name + "' for " + stream +
                " needs a float dtype, got " + dtypeName(dtype));
  NDArray out = NDArray::empty(shape, dtype);
  int64_t n = out.numel();
  if (spec.dist == Spec::Constant) {
    for (int64_t i = 0; i < n; ++i)
      out.set(i, spec.scale);
    return out;
  }
  if (spec.dist == Spec::UnitForgetBias) {
    for (int64_t i = 0; i < n; ++i)
      out.set(i, i >= n / 4 && i < n / 2 ? 1.0 : 0.0);
    return out;
  }
  if (spec.dist == Spec::Orthogonal) {
    std::mt19937_64 gen(deriveSeed(seed, stream));
    orthogonal(out, gen);
    return out;
  }
  if (spec.dist == Spec::FixedUniform) {
    std::mt19937_64 gen(deriveSeed(seed, stream));
    for (int64_t i = 0; i < n; ++i)
      out.set(i, (2.0 * uniform01(gen) - 1.0) * spec.scale);
    return out;
  }
  Fans fans = computeFans(shape);
  double fan = spec.mode == Spec::FanIn ? fans.in : (fans.in + fans.out) / 2;
  double variance = spec.scale / std::max(1.0, fan);
  std::mt19937_64 gen(deriveSeed(seed, stream));
  if (spec.dist == Spec::Uniform) {
    double limit = std::sqrt(3.0 * variance);
    for (int64_t i = 0; i < n; ++i)
      out.set(i, (2.0 * uniform01(gen) - 1.0) * limit);
    return out;
  }
  double stddev = std::sqrt(variance) / kTruncatedStddev;
  for (int64_t i = 0; i < n; ++i) {
    double z;
    do
      z = standardNormal(gen);
    while (std::abs(z) > 2.0);
    out.set(i, z * stddev);
  }
  return out;
}
