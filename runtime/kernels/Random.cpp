//===- Random.cpp - Counter-based uniform random numbers ------------------===//
//
// randomUniform is a pure function of (seed, counter, element index), so any
// backend (this library, generated CPU code, a GPU kernel) can reproduce the
// stream exactly and elements can be produced in any order or in parallel.
// The definition, which other backends must follow bit for bit:
//
//   mix(z)  = splitmix64 finalizer:
//               z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
//               z = (z ^ (z >> 27)) * 0x94D049BB133111EB
//               z ^ (z >> 31)
//   key     = mix(mix(seed + 0x9E3779B97F4A7C15) + counter)
//   bits(i) = mix(key + (i + 1) * 0x9E3779B97F4A7C15)      (i = flat index)
//   f32     = float(bits(i) >> 40) * 2^-24                  (in [0, 1))
//   f64     = double(bits(i) >> 11) * 2^-53                 (in [0, 1))
//
// All arithmetic is modulo 2^64.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/KernelSupport.h"
#include "runtime/kernels/Kernels.h"

using namespace kcc;
using namespace kcc::kernels;
using namespace kcc::kernels::detail;

namespace {

constexpr uint64_t kGolden = 0x9E3779B97F4A7C15ull;

inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
void fill(uint64_t key, int64_t begin, int64_t end, T *__restrict out) {
  for (int64_t i = begin; i < end; ++i) {
    uint64_t bits = mix(key + static_cast<uint64_t>(i + 1) * kGolden);
    if constexpr (sizeof(T) == 4)
      out[i] = static_cast<float>(bits >> 40) * 0x1p-24f;
    else
      out[i] = static_cast<double>(bits >> 11) * 0x1p-53;
  }
}

template <typename T> void generate(uint64_t key, int64_t n, T *out) {
  if (n < kParallelThreshold) {
    fill(key, 0, n, out);
    return;
  }
  constexpr int64_t kBlock = 4096;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < n; b += kBlock)
    fill(key, b, b + kBlock < n ? b + kBlock : n, out);
}

} // namespace

void kernels::randomUniform(uint64_t seed, uint64_t counter, NDArray &out) {
  uint64_t key = mix(mix(seed + kGolden) + counter);
  switch (out.dtype()) {
  case DType::F32:
    return generate(key, out.numel(), out.data<float>());
  case DType::F64:
    return generate(key, out.numel(), out.data<double>());
  default:
    throw KernelError(std::string("randomUniform: unsupported dtype ") +
                      dtypeName(out.dtype()) + " for " +
                      shapeToString(out.shape()));
  }
}
