//===- Initializers.h - Keras weight initializers ---------------*- C++ -*-===//
//
// The initializers follow Keras's definitions (VarianceScaling underneath):
//
//   glorot_uniform  U(-l, l), l = sqrt(6 / (fan_in + fan_out))
//   glorot_normal   truncated N(0, s), s = sqrt(2 / (fan_in + fan_out)) / .8796
//   he_uniform      U(-l, l), l = sqrt(6 / fan_in)
//   he_normal       truncated N(0, s), s = sqrt(2 / fan_in) / .8796
//   lecun_uniform   U(-l, l), l = sqrt(3 / fan_in)
//   lecun_normal    truncated N(0, s), s = sqrt(1 / fan_in) / .8796
//   orthogonal      Q of the QR of a standard normal matrix (Keras's Orthogonal)
//   zeros, ones
//
// with Keras's fans: [in, out] for a kernel, kh*kw*cin and kh*kw*cout for a
// conv kernel. Truncated normals redraw outside two standard deviations; the
// .8796 restores the intended variance after truncation, as in Keras.
//
// Each weight draws from its own std::mt19937_64 stream seeded from
// (seed, stream name), so one seed reproduces every weight. Uniform and
// normal numbers are computed here from the raw 64-bit draws (not with
// <random>'s distributions, whose output differs between standard
// libraries), so the weights are the same on every platform.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_FRONTEND_INITIALIZERS_H
#define KCC_FRONTEND_INITIALIZERS_H

#include "runtime/NDArray.h"

#include <string>

namespace kcc {
namespace init {

struct Fans {
  double in = 1, out = 1;
};
/// Keras's compute_fans.
Fans computeFans(const Shape &shape);

bool isInitializer(const std::string &name);

/// The seed of the stream `stream` (e.g. "dense_1/kernel") under `seed`.
uint64_t deriveSeed(uint64_t seed, const std::string &stream);

/// A new float array of `shape` drawn from initializer `name`; throws
/// kcc::Error for an unknown name or a non-float dtype.
NDArray initialize(const std::string &name, const Shape &shape, DType dtype,
                   uint64_t seed, const std::string &stream);

} // namespace init
} // namespace kcc

#endif // KCC_FRONTEND_INITIALIZERS_H
