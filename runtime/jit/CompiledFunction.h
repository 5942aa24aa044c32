//===- CompiledFunction.h - A kc function JIT-compiled for the CPU -*- C++
//-*-===//
//
// compile() lowers one func.func of kc ops through kc-cpu-pipeline to the
// LLVM dialect, JIT-compiles it with ORC (MLIR's ExecutionEngine) for the
// host CPU at -O3, and keeps the kc-level signature so run() can check its
// arguments and allocate its results. The compiled entry takes bare
// pointers: `void f(T *arg0, ..., T *res0, ...)`; results are written into
// caller-provided buffers (runInto reuses them across steps).
//
// Errors (a lowering failure, a JIT failure, arguments that do not match the
// signature) throw kcc::Error with the diagnostic and its location.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_RUNTIME_JIT_COMPILEDFUNCTION_H
#define KCC_RUNTIME_JIT_COMPILEDFUNCTION_H

#include "runtime/NDArray.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kcc {

/// How to compile for the host CPU.
struct CpuOptions {
  /// LLVM optimization level of the generated code (0-3).
  unsigned optLevel = 3;
  /// Target CPU and features; empty means the host's (llvm::sys).
  std::string cpu;
  std::string features;
  /// Fuse elementwise chains before bufferization (off only for debugging).
  bool fuseElementwise = true;
  /// Bias and relu into the GEMM/convolution calls (kc-fuse-epilogues).
  bool fuseEpilogues = true;
  /// Runs of loop nests into one loop each (kc-fuse-loops).
  bool fuseLoops = true;
  /// Results kc-mark-in-place proves safe are written into their argument
  /// (inPlaceResults()); the out-param passed for them is ignored.
  bool inPlaceUpdates = false;
  /// Place intermediates in one static arena (kc-plan-memory), allocated
  /// once with the function and reused by every call.
  bool planMemory = true;
  /// Keep the LLVM dialect and LLVM IR as text (llvmDialect(), llvmIR());
  /// printing a large step costs compile time, so only on request.
  bool keepIR = false;
};

/// One argument or result of the kc-level signature.
struct TensorSpec {
  Shape shape;
  DType dtype = DType::F32;
};

class CompiledFunction {
public:
  /// Compiles `funcName` of `module` (the module is cloned, never changed).
  static CompiledFunction compile(mlir::ModuleOp module,
                                  llvm::StringRef funcName,
                                  const CpuOptions &options = {});

  CompiledFunction(CompiledFunction &&) noexcept;
  CompiledFunction &operator=(CompiledFunction &&) noexcept;
  ~CompiledFunction();

  /// Runs on `args` and returns freshly allocated results.
  std::vector<NDArray> run(const std::vector<NDArray> &args) const;
  /// Runs on `args`, writing into `outs` (shapes and dtypes as the results).
  /// An output may not alias an argument. Calls on one CompiledFunction must
  /// not overlap: its arena is their scratch memory.
  void runInto(const std::vector<NDArray> &args,
               std::vector<NDArray> &outs) const;

  const std::vector<TensorSpec> &argSpecs() const;
  const std::vector<TensorSpec> &resultSpecs() const;
  const std::string &name() const;

  /// The module after kc-cpu-pipeline (LLVM dialect), as text; empty
  /// unless compiled with CpuOptions::keepIR.
  std::string llvmDialect() const;
  /// The LLVM IR handed to the JIT (before LLVM's own -O3), as text; empty
  /// unless compiled with CpuOptions::keepIR.
  std::string llvmIR() const;
  /// Bytes of the arena every call reuses (0 without memory planning).
  int64_t arenaBytes() const;
  /// (result, argument) pairs kc-mark-in-place proved safe in place: a
  /// caller may pass the argument's array as that result; with
  /// CpuOptions::inPlaceUpdates the step writes the argument itself.
  const std::vector<std::pair<unsigned, unsigned>> &inPlaceResults() const;

private:
  struct Impl;
  explicit CompiledFunction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kcc

#endif // KCC_RUNTIME_JIT_COMPILEDFUNCTION_H
