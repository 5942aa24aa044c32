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

/// bfloat16 -> float32: exact.
inline float floatOfBF16(uint16_t h) {
  return floatOf(static_cast<uint32_t>(h) << 16);
}

/// float32 -> bfloat16, rounding to nearest even; a NaN stays a (quiet)
/// NaN. The same integer steps as MLIR's arith bf16 expansion, so compiled
/// code and the kernels round alike.
inline uint16_t bf16Of(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_FLOATBITS_H
