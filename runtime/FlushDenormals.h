//===- FlushDenormals.h - Denormals as zero for the length of a step -*- C++
//-*-===//
//
// Subnormal floats are up to a hundred times slower on x86, and a training
// step produces them as gradients and Adam's moments decay towards zero.
// TensorFlow (and so Keras) runs its kernels with flush-to-zero and
// denormals-are-zero set; kcc does the same, in both the compiled and the
// interpreted step, so the two stay comparable. The OpenMP runtime copies
// the calling thread's MXCSR to its team at every fork, so oneDNN and the
// generated parallel loops inherit it.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_FLUSHDENORMALS_H
#define KCC_RUNTIME_FLUSHDENORMALS_H

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace kcc {

/// Sets FTZ and DAZ for its scope and restores the caller's mode after.
class ScopedFlushDenormals {
public:
#if defined(__SSE__)
  ScopedFlushDenormals() : saved_(_mm_getcsr()) {
    _mm_setcsr(saved_ | kFlushToZero | kDenormalsAreZero);
  }
  ~ScopedFlushDenormals() { _mm_setcsr(saved_); }
#else
  ScopedFlushDenormals() = default;
#endif
  ScopedFlushDenormals(const ScopedFlushDenormals &) = delete;
  ScopedFlushDenormals &operator=(const ScopedFlushDenormals &) = delete;

private:
#if defined(__SSE__)
  static constexpr unsigned kFlushToZero = 0x8000;
  static constexpr unsigned kDenormalsAreZero = 0x0040;
  unsigned saved_;
#endif
};

} // namespace kcc

#endif // KCC_RUNTIME_FLUSHDENORMALS_H
