//===- CudaProgram.h - A compiled function for the CUDA runtime -*- C++ -*-===//
//
// What kc-cuda-pipeline leaves for the runtime, free of MLIR: the PTX of each
// kernel module and the host side as a flat list of steps (kernel launches,
// cuBLASLt GEMMs, copies) over buffers named by where they live: a function
// argument, the static arena, or a constant. Shapes are static, so every
// launch's grid, block and argument is known here; the runtime records the
// steps once (a CUDA graph) and replays them.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_CUDA_CUDAPROGRAM_H
#define KCC_CODEGEN_CUDA_CUDAPROGRAM_H

#include <cstdint>
#include <string>
#include <vector>

namespace kcc {
namespace cuda {

/// A device address: `byteOffset` bytes into an argument, the arena or a
/// constant.
struct BufferRef {
  enum class Kind { Arg, Arena, Constant } kind = Kind::Arena;
  int64_t index = 0; ///< argument or constant number
  int64_t byteOffset = 0;
};

/// One kernel parameter. Memrefs are passed as MLIR's expanded descriptor:
/// allocated and aligned pointer (both `base`), offset, sizes, strides.
struct KernelArg {
  enum class Kind { Memref, I32, I64, F32, F64 } kind = Kind::Memref;
  BufferRef base;
  int64_t offset = 0;
  std::vector<int64_t> sizes, strides;
  int64_t intValue = 0;
  double floatValue = 0;
};

struct Launch {
  unsigned module = 0; ///< index into CudaProgram::modules
  std::string kernel;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  std::vector<KernelArg> args;
};

/// A kcc_rt_* call (only `matmul` reaches the GPU runtime): its buffers
/// (inputs, then the output) and its i64 arguments in the CPU ABI's order
/// (the dims of every buffer, then the op's attributes).
struct LibraryCall {
  std::string name;  ///< e.g. "matmul"
  std::string dtype; ///< "f32" or "f64"
  std::vector<BufferRef> buffers;
  std::vector<int64_t> ints;
};

struct Copy {
  BufferRef from, to;
  int64_t bytes = 0;
};

struct Step {
  enum class Kind { Launch, Call, Copy } kind = Kind::Launch;
  unsigned index = 0; ///< into launches, calls or copies
};

/// An argument of the compiled entry: the original inputs, then one
/// caller-provided buffer per result.
struct ArgSpec {
  std::vector<int64_t> shape;
  std::string dtype; ///< "f32", "f64", "i64", "i32", "i1"
  int64_t bytes = 0;
};

struct PtxModule {
  std::string name, ptx;
};

struct CudaProgram {
  std::string function;
  std::vector<PtxModule> modules;
  std::vector<ArgSpec> args;
  unsigned numInputs = 0, numResults = 0;
  int64_t arenaBytes = 0;
  std::vector<std::string> constants; ///< raw bytes of each constant buffer
  std::vector<Launch> launches;
  std::vector<LibraryCall> calls;
  std::vector<Copy> copies;
  std::vector<Step> steps;
};

} // namespace cuda
} // namespace kcc

#endif // KCC_CODEGEN_CUDA_CUDAPROGRAM_H
