//===- CudaEager.h - Op-by-op execution on the GPU (eager baseline) -*- C++
//-*-===//
//
// The GPU counterpart of the interpreter: runs a func.func of kc ops one op
// at a time, each op a program of its own (compiled once by kc-cuda-pipeline
// and cached by the op's name, attributes and types), with one device
// allocation per result (stream-ordered, as eager frameworks' caching
// allocators) and no fusion across ops. It is the baseline the compiled
// executable is measured against.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_CUDA_CUDAEAGER_H
#define KCC_ENGINE_CUDA_CUDAEAGER_H

#include "codegen/cuda/CudaPasses.h"
#include "engine/cuda/CudaExecutable.h"
#include "runtime/NDArray.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kcc {
namespace cuda {

struct EagerCounts {
  int64_t opsDispatched = 0, kernelLaunches = 0, gemmCalls = 0;
  int64_t allocations = 0, compiles = 0;
};

class CudaEager {
public:
  /// Throws kcc::Error("no CUDA device found: ...") without a device.
  explicit CudaEager(const CudaOptions &opts = CudaOptions());
  ~CudaEager();

  /// Runs `f` on `args` op by op; returns its results.
  std::vector<NDArray> run(mlir::func::FuncOp f,
                           const std::vector<NDArray> &args);

  // --- The training loop, as an eager framework runs it: parameters and
  // optimizer state stay on the device between steps.
  /// Uploads every argument of `f` once.
  void setResident(mlir::func::FuncOp f, const std::vector<NDArray> &args);
  /// Uploads `perStep`, runs `f` op by op on the resident arguments,
  /// downloads the `fetch` results and makes each carried result r the
  /// argument a of the next step.
  std::vector<NDArray>
  stepResident(mlir::func::FuncOp f,
               const std::vector<std::pair<unsigned, unsigned>> &carry,
               const std::map<unsigned, NDArray> &perStep,
               const std::vector<unsigned> &fetch);

  const EagerCounts &counts() const { return counts_; }

private:
  CudaExecutable &programFor(mlir::Operation *op);
  /// Runs `f` on device buffers; returns one fresh buffer per result (the
  /// arguments stay owned by the caller).
  std::vector<uint64_t> runDevice(mlir::func::FuncOp f,
                                  const std::vector<uint64_t> &args);
  std::vector<uint64_t> resident_;

  CudaOptions opts_;
  void *stream_ = nullptr;
  std::map<std::string, std::unique_ptr<CudaExecutable>> cache_;
  EagerCounts counts_;
};

} // namespace cuda
} // namespace kcc

#endif // KCC_ENGINE_CUDA_CUDAEAGER_H
