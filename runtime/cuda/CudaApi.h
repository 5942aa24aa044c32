//===- CudaApi.h - The CUDA driver and cuBLASLt, loaded at run time -*- C++
//-*-===//
//
// kcc binaries must start (and their tests run) on machines without an
// NVIDIA driver, so nothing links libcuda or cuBLASLt: both are dlopen'ed on
// first use and every entry point is looked up by its versioned ABI name.
// The toolkit headers give the types only.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_CUDA_CUDAAPI_H
#define KCC_RUNTIME_CUDA_CUDAAPI_H

#include <cublasLt.h>
#include <cuda.h>

#include <string>

namespace kcc {
namespace cuda {

#define KCC_CU_FN(name) decltype(&::name) name = nullptr;

/// The driver entry points kcc uses (the names are cuda.h's, which map to
/// the current ABI versions, e.g. cuMemAlloc -> cuMemAlloc_v2).
struct DriverApi {
  KCC_CU_FN(cuInit)
  KCC_CU_FN(cuDeviceGetCount)
  KCC_CU_FN(cuDeviceGet)
  KCC_CU_FN(cuDeviceGetName)
  KCC_CU_FN(cuDevicePrimaryCtxRetain)
  KCC_CU_FN(cuCtxSetCurrent)
  KCC_CU_FN(cuGetErrorString)
  KCC_CU_FN(cuModuleLoadDataEx)
  KCC_CU_FN(cuModuleGetFunction)
  KCC_CU_FN(cuModuleUnload)
  KCC_CU_FN(cuMemAlloc)
  KCC_CU_FN(cuMemFree)
  KCC_CU_FN(cuMemAllocAsync)
  KCC_CU_FN(cuMemFreeAsync)
  KCC_CU_FN(cuMemAllocHost)
  KCC_CU_FN(cuMemFreeHost)
  KCC_CU_FN(cuMemcpyHtoD)
  KCC_CU_FN(cuMemcpyDtoH)
  KCC_CU_FN(cuMemcpyAsync)
  KCC_CU_FN(cuMemcpyHtoDAsync)
  KCC_CU_FN(cuMemcpyDtoHAsync)
  KCC_CU_FN(cuMemsetD8)
  KCC_CU_FN(cuStreamCreate)
  KCC_CU_FN(cuStreamDestroy)
  KCC_CU_FN(cuStreamSynchronize)
  KCC_CU_FN(cuStreamBeginCapture)
  KCC_CU_FN(cuStreamEndCapture)
  KCC_CU_FN(cuGraphInstantiateWithFlags)
  KCC_CU_FN(cuGraphLaunch)
  KCC_CU_FN(cuGraphDestroy)
  KCC_CU_FN(cuGraphExecDestroy)
  KCC_CU_FN(cuLaunchKernel)
  KCC_CU_FN(cuEventCreate)
  KCC_CU_FN(cuEventRecord)
  KCC_CU_FN(cuEventSynchronize)
  KCC_CU_FN(cuEventElapsedTime)
  KCC_CU_FN(cuEventDestroy)
};

struct BlasLtApi {
  KCC_CU_FN(cublasLtCreate)
  KCC_CU_FN(cublasLtDestroy)
  KCC_CU_FN(cublasLtMatmulDescCreate)
  KCC_CU_FN(cublasLtMatmulDescDestroy)
  KCC_CU_FN(cublasLtMatmulDescSetAttribute)
  KCC_CU_FN(cublasLtMatrixLayoutCreate)
  KCC_CU_FN(cublasLtMatrixLayoutDestroy)
  KCC_CU_FN(cublasLtMatmulPreferenceCreate)
  KCC_CU_FN(cublasLtMatmulPreferenceDestroy)
  KCC_CU_FN(cublasLtMatmulPreferenceSetAttribute)
  KCC_CU_FN(cublasLtMatmulAlgoGetHeuristic)
  KCC_CU_FN(cublasLtMatmul)
};

#undef KCC_CU_FN

/// The driver with a current context on device 0, or null with `why` set
/// ("no CUDA device found: ..."). Loaded and initialized once per process.
const DriverApi *driver(std::string *why = nullptr);

/// cuBLASLt, or null with `why` set.
const BlasLtApi *blasLt(std::string *why = nullptr);

/// True when a CUDA device can run kcc programs; otherwise `why` says why
/// (always starting "no CUDA device found").
bool deviceAvailable(std::string *why = nullptr);

/// The device's name ("NVIDIA H200"), empty without one.
std::string deviceName();

/// Throws kcc::Error("<what>: <driver message>") unless `r` is success.
void check(CUresult r, const char *what);
void checkBlas(cublasStatus_t s, const char *what);

} // namespace cuda
} // namespace kcc

#endif // KCC_RUNTIME_CUDA_CUDAAPI_H
