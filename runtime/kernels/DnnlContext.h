//===- DnnlContext.h - The oneDNN engine and stream of the kernels -*- C++
//-*-===//
//
// One CPU engine for the process; one stream per thread, since a oneDNN
// stream is not to be shared by threads executing at once. The GEMM and
// convolution kernels cache their primitives per thread for the same reason.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_KERNELS_DNNLCONTEXT_H
#define KCC_RUNTIME_KERNELS_DNNLCONTEXT_H

#include <oneapi/dnnl/dnnl.hpp>

namespace kcc {
namespace kernels {
namespace detail {

inline dnnl::engine &cpuEngine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

inline dnnl::stream &cpuStream() {
  thread_local dnnl::stream stream(cpuEngine());
  return stream;
}

} // namespace detail
} // namespace kernels
} // namespace kcc

#endif // KCC_RUNTIME_KERNELS_DNNLCONTEXT_H
