//===- FloatBits.h - f32 <-> its bits, for the math kernels -----*- C++ -*-===//
//
// The bit casts the math kernels (Exp.h, Log.h) use to take a float's
// exponent apart and to build 2^k, the C++ side of the arith.bitcast that
// kc-expand-math emits. Integer arithmetic on the bits is done unsigned, so
// that it wraps as the generated i32 code does (C++'s signed overflow is
// undefined) for the inputs whose result a select then discards.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_FLOATBITS_H
#define KCC_RUNTIME_KERNELS_FLOATBITS_H

#include <cstdint>
#include <cstring>

namespace kcc {
namespace kernels {

inline uint32_t bitsOf(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

inline float floatOf(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

/// 2^k for k in [-126, 127], built in the exponent field.
inline float pow2Of(int32_t k) {
  return floatOf((static_cast<uint32_t>(k) + 127u) << 23);
}

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_FLOATBITS_H
