//===- CudaExecutable.h - Run a CudaProgram on the GPU ----------*- C++ -*-===//
//
// Loads a CudaProgram (PTX modules via cuModuleLoadDataEx, cuBLASLt GEMM
// plans, the arena and constants, all once at load) and runs it on one
// stream. Two ways to run:
//
//  - run(args): upload every input, enqueue the steps, download every
//    result (tests, and one op of the GPU eager mode via enqueue);
//  - the training loop: carried buffers (params, optimizer state) stay on
//    the device, ping-ponging between two copies, so each step is one
//    replay of a CUDA graph (captured once per parity) plus the per-step
//    inputs going up and the fetched results (the loss) coming down.
//
// Every call throws kcc::Error when no device is usable
// ("no CUDA device found: ...").
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_CUDA_CUDAEXECUTABLE_H
#define KCC_ENGINE_CUDA_CUDAEXECUTABLE_H

#include "codegen/cuda/CudaProgram.h"
#include "runtime/NDArray.h"

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

namespace kcc {
namespace cuda {

/// What one executable did (the benchmark prints these).
struct CudaCounts {
  int64_t kernelLaunches = 0; ///< per run of the program
  int64_t gemmCalls = 0;
  int64_t arenaBytes = 0;
  int64_t graphReplays = 0;
};

class CudaExecutable {
public:
  /// Loads `program` on device 0. Without `allocateArgs` the caller passes
  /// every argument's address to enqueue (the eager mode). Throws
  /// kcc::Error.
  static std::unique_ptr<CudaExecutable> load(CudaProgram program,
                                              bool allocateArgs = true);
  ~CudaExecutable();
  CudaExecutable(const CudaExecutable &) = delete;
  CudaExecutable &operator=(const CudaExecutable &) = delete;

  const CudaProgram &program() const { return program_; }
  CudaCounts counts() const;

  /// Uploads `inputs` (numInputs arrays), runs once, returns the results.
  std::vector<NDArray> run(const std::vector<NDArray> &inputs);

  /// Enqueues the steps on this executable's stream with arguments at the
  /// given device addresses (inputs then results) and `arena` (0: the
  /// executable's own), on `stream` (a CUstream; null: the executable's).
  /// Does not synchronize.
  void enqueue(const std::vector<uint64_t> &argAddrs, uint64_t arena = 0,
               void *stream = nullptr);
  void synchronize();

  // --- The training loop ---------------------------------------------
  /// Result `r` of one step becomes input `a` of the next, on the device.
  void setCarry(const std::vector<std::pair<unsigned, unsigned>> &resultToArg);
  /// Sets a resident input (a param, the optimizer state, the counter).
  void upload(unsigned arg, const NDArray &value);
  /// The current value of a resident input.
  NDArray download(unsigned arg);
  /// One step: uploads `perStep` inputs, replays the graph, returns the
  /// `fetch` results (e.g. the loss). The first call per parity captures.
  std::vector<NDArray> step(const std::map<unsigned, NDArray> &perStep,
                            const std::vector<unsigned> &fetch);

private:
  CudaExecutable() = default;
  struct Impl;
  CudaProgram program_;
  std::unique_ptr<Impl> impl_;
};

/// Element type of an ArgSpec's dtype string.
DType dtypeOf(const std::string &name);

} // namespace cuda
} // namespace kcc

#endif // KCC_ENGINE_CUDA_CUDAEXECUTABLE_H
