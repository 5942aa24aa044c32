//===- CudaApi.cpp - dlopen libcuda and cuBLASLt --------------------------===//

#include "runtime/cuda/CudaApi.h"
#include "runtime/Error.h"

#include <dlfcn.h>

#include <mutex>

using namespace kcc;
using namespace kcc::cuda;

namespace {

/// Looks every entry point up by its ABI name (`abi`, the macro-expanded
/// spelling, e.g. "cuMemAlloc_v2"); false with `why` naming the first
/// missing one.
template <typename Fn>
bool lookup(void *lib, Fn &fn, const char *abi, std::string &why) {
  fn = reinterpret_cast<Fn>(dlsym(lib, abi));
  if (!fn && why.empty())
    why = std::string("missing entry point ") + abi;
  return fn != nullptr;
}

// Two levels so the argument is macro-expanded first: the string is the ABI
// symbol (cuMemAlloc -> "cuMemAlloc_v2").
#define KCC_STR2(x) #x
#define KCC_STR(x) KCC_STR2(x)
#define KCC_LOOKUP(api, lib, name, why)                                        \
  lookup(lib, api.name, KCC_STR(name), why)

struct DriverState {
  DriverApi api;
  std::string why;
  bool ok = false;
  CUdevice device = 0;
  std::string name;

  DriverState() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "no CUDA device found: cannot load libcuda.so.1 (no NVIDIA "
            "driver installed)";
      return;
    }
    std::string missing;
    // clang-format off: one lookup per entry point, several to a line.
#define L(name) KCC_LOOKUP(api, lib, name, missing)
    L(cuInit); L(cuDeviceGetCount); L(cuDeviceGet); L(cuDeviceGetName);
    L(cuDevicePrimaryCtxRetain); L(cuCtxSetCurrent); L(cuGetErrorString);
    L(cuModuleLoadDataEx); L(cuModuleGetFunction); L(cuModuleUnload);
    L(cuMemAlloc); L(cuMemFree); L(cuMemAllocAsync); L(cuMemFreeAsync);
    L(cuMemAllocHost); L(cuMemFreeHost);
    L(cuMemcpyHtoD); L(cuMemcpyDtoH); L(cuMemcpyAsync); L(cuMemcpyHtoDAsync); L(cuMemcpyDtoHAsync);
    L(cuMemsetD8);
    L(cuStreamCreate); L(cuStreamDestroy); L(cuStreamSynchronize);
    L(cuStreamBeginCapture); L(cuStreamEndCapture);
    L(cuGraphInstantiateWithFlags); L(cuGraphLaunch); L(cuGraphDestroy);
    L(cuGraphExecDestroy); L(cuLaunchKernel); L(cuEventCreate);
    L(cuEventRecord); L(cuEventSynchronize); L(cuEventElapsedTime);
    L(cuEventDestroy);
#undef L
    // clang-format on
    if (!missing.empty()) {
      why = "no CUDA device found: libcuda.so.1 is too old (" + missing + ")";
      return;
    }
    if (CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
      why = "no CUDA device found: cuInit failed with error " +
            std::to_string(int(r));
      return;
    }
    int count = 0;
    if (api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
      why = "no CUDA device found: the driver reports no device";
      return;
    }
    CUcontext ctx;
    if (api.cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
        api.cuDevicePrimaryCtxRetain(&ctx, device) != CUDA_SUCCESS ||
        api.cuCtxSetCurrent(ctx) != CUDA_SUCCESS) {
      why = "no CUDA device found: cannot create a context on device 0";
      return;
    }
    char buf[256] = {0};
    api.cuDeviceGetName(buf, sizeof(buf), device);
    name = buf;
    ok = true;
  }
};

DriverState &driverState() {
  static DriverState state;
  return state;
}

struct BlasState {
  BlasLtApi api;
  std::string why;
  bool ok = false;
  BlasState() {
    void *lib = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      lib = dlopen("libcublasLt.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      why = "cannot load libcublasLt.so.13 (is the CUDA toolkit's lib64 on "
            "LD_LIBRARY_PATH?)";
      return;
    }
    std::string missing;
    // clang-format off: one lookup per entry point, several to a line.
#define L(name) KCC_LOOKUP(api, lib, name, missing)
    L(cublasLtCreate); L(cublasLtDestroy); L(cublasLtMatmulDescCreate);
    L(cublasLtMatmulDescDestroy); L(cublasLtMatmulDescSetAttribute);
    L(cublasLtMatrixLayoutCreate); L(cublasLtMatrixLayoutDestroy);
    L(cublasLtMatmulPreferenceCreate); L(cublasLtMatmulPreferenceDestroy);
    L(cublasLtMatmulPreferenceSetAttribute); L(cublasLtMatmulAlgoGetHeuristic);
    L(cublasLtMatmul);
#undef L
    // clang-format on
    if (!missing.empty()) {
      why = "cuBLASLt: " + missing;
      return;
    }
    ok = true;
  }
};

} // namespace

const DriverApi *kcc::cuda::driver(std::string *why) {
  DriverState &s = driverState();
  if (!s.ok && why)
    *why = s.why;
  return s.ok ? &s.api : nullptr;
}

const BlasLtApi *kcc::cuda::blasLt(std::string *why) {
  static BlasState state;
  if (!state.ok && why)
    *why = state.why;
  return state.ok ? &state.api : nullptr;
}

bool kcc::cuda::deviceAvailable(std::string *why) {
  return driver(why) != nullptr;
}

std::string kcc::cuda::deviceName() {
  return driverState().ok ? driverState().name : std::string();
}

void kcc::cuda::check(CUresult r, const char *what) {
  if (r == CUDA_SUCCESS)
    return;
  const char *msg = nullptr;
  if (const DriverApi *api = driver())
    api->cuGetErrorString(r, &msg);
  throw Error(std::string(what) + ": " +
              (msg ? msg : ("CUDA error " + std::to_string(int(r))).c_str()));
}

void kcc::cuda::checkBlas(cublasStatus_t s, const char *what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string(what) + ": cuBLASLt status " +
                std::to_string(int(s)));
}
