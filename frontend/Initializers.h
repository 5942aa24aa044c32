//===- Initializers.h - Keras weight initializers ---------------*- C++ -*-===//
//
// The initializers follow Keras 3's definitions (VarianceScaling underneath
// the named ones):
//
//   glorot_uniform  U(-l, l), l = sqrt(6 / (fan_in + fan_out))
//   glorot_normal   truncated N(0, s), s = sqrt(2 / (fan_in + fan_out)) / .8796
//   he_uniform      U(-l, l), l = sqrt(6 / fan_in)
//   he_normal       truncated N(0, s), s = sqrt(2 / fan_in) / .8796
//   lecun_uniform   U(-l, l), l = sqrt(3 / fan_in)
//   lecun_normal    truncated N(0, s), s = sqrt(1 / fan_in) / .8796
//   orthogonal      gain * Q of the QR of a standard normal matrix
//   zeros, ones
//
// and, with Keras's arguments (text form "name(arg=value,...)", see
// Initializer::str()):
//
//   random_normal(mean, stddev)       N(mean, stddev)           (0, 0.05)
//   truncated_normal(mean, stddev)    N(mean, stddev) redrawn outside
//                                     mean +- 2 stddev, not rescaled (0, 0.05)
//   random_uniform(minval, maxval)    U(minval, maxval)  (-0.05, 0.05), whose
//                                     default is also called "uniform"
//   constant(value)                   value                     (0)
//   variance_scaling(scale, mode, distribution)  v = scale / n, n = fan_in,
//                                     fan_out or their mean (mode); N(0,
//                                     sqrt(v) / .8796) truncated at 2 stddev
//                                     (truncated_normal), N(0, sqrt(v))
//                                     (untruncated_normal) or U(-l, l),
//                                     l = sqrt(3 v) (uniform)
//                                     (1, fan_in, truncated_normal)
//   identity(gain)                    gain * eye, 2-D weights only (1)
//
// and LSTM's bias with Keras's unit_forget_bias, "unit_forget_bias" (ones
// on the forget gate's quarter of [i, f, c, o], zeros elsewhere) or
// "unit_forget_bias(<initializer>)": as Keras's LSTMCell, the initializer
// drawn for [units] (i) and for [2 * units] (c, o), ones between.
//
// with Keras's fans: [in, out] for a kernel, kh*kw*cin and kh*kw*cout for a
// conv kernel. Truncated normals redraw outside two standard deviations; the
// .8796 restores the intended variance after truncation, as in Keras.
//
// Each weight draws from its own std::mt19937_64 stream seeded from
// (seed, stream name), so one seed reproduces every weight. Uniform and
// normal numbers are computed here from the raw 64-bit draws (not with
// <random>'s distributions, whose output differs between standard
// libraries), so the weights are the same on every platform. Keras's own
// seeds are not kept: kcc draws its own streams.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_INITIALIZERS_H
#define KCC_FRONTEND_INITIALIZERS_H

#include "runtime/NDArray.h"

#include <optional>
#include <string>

namespace kcc {
namespace init {

struct Fans {
  double in = 1, out = 1;
};
/// Keras's compute_fans.
Fans computeFans(const Shape &shape);

/// An initializer and its arguments, with Keras's names and defaults.
/// Only the arguments of `name` mean anything; the others keep their
/// defaults.
struct Initializer {
  /// glorot_uniform, ..., orthogonal, zeros, ones, random_normal,
  /// truncated_normal, random_uniform, constant, variance_scaling, identity
  /// (and kcc's unit_forget_bias, LSTM's bias).
  std::string name;
  double mean = 0.0, stddev = 0.05;     ///< random_normal, truncated_normal
  double minval = -0.05, maxval = 0.05; ///< random_uniform
  double value = 0.0;                   ///< constant
  double scale = 1.0;                   ///< variance_scaling
  std::string mode = "fan_in";          ///< fan_in, fan_out or fan_avg
  std::string distribution = "truncated_normal"; ///< or untruncated_normal,
                                                 ///< uniform
  double gain = 1.0;                             ///< identity, orthogonal
  /// unit_forget_bias: the canonical text of LSTM's bias_initializer
  /// ("" for zeros), drawn outside the forget gate's quarter.
  std::string inner;

  /// The text form layers store and initialize() takes: the bare name for
  /// the initializers without arguments, "uniform" for random_uniform's
  /// default range and "orthogonal" for gain 1 (the names kcc always had),
  /// else "name(arg=value,...)" with every argument of the name, numbers
  /// in their shortest exact decimal form:
  /// "random_normal(mean=0,stddev=0.02)",
  /// "variance_scaling(scale=2,mode=fan_out,distribution=uniform)";
  /// "unit_forget_bias(<inner>)" for a non-zero LSTM bias initializer.
  std::string str() const;
};

/// `text`, a name alone (Keras's defaults) or "name(arg=value,...)" with
/// any of the name's arguments; nullopt, with the reason in `error`, for an
/// unknown name or argument, a malformed text or a value check() refuses.
std::optional<Initializer> parse(const std::string &text,
                                 std::string *error = nullptr);

/// Puts `init`'s arguments in canonical form (Keras's distribution "normal"
/// is truncated_normal, names are lower case) and returns what is wrong
/// with them ("" if nothing): numbers must be finite, variance_scaling's
/// scale positive and its mode and distribution Keras's.
std::string normalize(Initializer &init);

/// The names parse() knows, for error messages.
std::string supportedNames();

/// Keras's class of `name` ("random_normal" -> "RandomNormal"); "" for
/// kcc's own (unit_forget_bias) or an unknown name.
std::string kerasClassName(const std::string &name);

/// kcc's name of a Keras initializer, as a class name or as one of the
/// strings keras.initializers.get() takes ("RandomNormal",
/// "random_normal", "normal", "IdentityInitializer", "zero"); "" if
/// unknown.
std::string fromKerasName(const std::string &kerasName);

/// Keras's initializer classes kcc has, for error messages.
std::string supportedKerasClasses();

/// Whether initialize() takes `text` (parse() succeeds).
bool isInitializer(const std::string &text);

/// The seed of the stream `stream` (e.g. "dense_1/kernel") under `seed`.
uint64_t deriveSeed(uint64_t seed, const std::string &stream);

/// A new float array of `shape` drawn from initializer `name` (a text form
/// parse() takes); throws kcc::Error for an unknown or malformed name, a
/// non-float dtype, or identity on a weight that is not 2-D.
NDArray initialize(const std::string &name, const Shape &shape, DType dtype,
                   uint64_t seed, const std::string &stream);

} // namespace init
} // namespace kcc

#endif // KCC_FRONTEND_INITIALIZERS_H
