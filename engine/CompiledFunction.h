//===- CompiledFunction.h - A kc function JIT-compiled for the CPU -*- C++
//-*-===//
//
// compile() is build() then load(). build() lowers one func.func of kc ops
// through kc-cpu-pipeline to the LLVM dialect, translates it to LLVM IR,
// optimizes it at -O<n> and emits a relocatable object for the host CPU
// (the same steps as `kcc --emit=obj`): a CompiledArtifact, the object code
// plus the kc-level signature and what the pipeline recorded (in-place
// results, kernel count, memory plan). load() links an artifact into the
// process with ORC (LLJIT, RuntimeDyld), from build() or from the disk
// cache alike, so a cached function runs exactly the code a fresh compile
// links. The compiled entry takes bare pointers: `void f(T *arg0, ...,
// T *res0, ...)`; results are written into caller-provided buffers
// (runInto reuses them across steps).
//
// Errors (a lowering failure, a JIT failure, arguments that do not match the
// signature) throw kcc::Error with the diagnostic and its location.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_COMPILEDFUNCTION_H
#define KCC_ENGINE_COMPILEDFUNCTION_H

#include "codegen/Passes.h"
#include "codegen/aot/AotCompiler.h"
#include "codegen/memory/MemoryPlan.h"
#include "codegen/pipeline/KernelCount.h"
#include "runtime/NDArray.h"

#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"

namespace kcc {

/// How a kc module is compiled for the CPU: the one options type of the JIT
/// and of `kcc --emit` (both lower through lowerForCpu with it). The
/// pipeline part is kc-cpu-pipeline's own options struct, the one kcc-opt
/// parses, so there is nothing to keep in sync; the compile cache's key is
/// derived from all of it (key()).
struct CpuOptions {
  /// The pipeline a training step runs compiled: the arena is a trailing
  /// argument allocated once per function, and results proven safe are
  /// written over their arguments.
  CpuOptions();
  CpuOptions(const CpuOptions &other);
  CpuOptions &operator=(const CpuOptions &other);
  ~CpuOptions();

  /// kc-cpu-pipeline's options (never null), e.g. `pipeline->fuseLoops =
  /// false`.
  std::unique_ptr<CpuPipelineOptions> pipeline;
  /// Target CPU, features and LLVM optimization level; empty CPU and
  /// features mean the host's.
  aot::TargetOptions target;
  /// Keep the LLVM dialect and LLVM IR as text (llvmDialect(), llvmIR());
  /// printing a large step costs compile time, so only on request.
  bool keepIR = false;

  /// Every option above in one string: two compiles with the same key
  /// produce the same code.
  std::string key() const;
};

/// Runs kc-cpu-pipeline with `options` on `module` (changed in place): what
/// the JIT compiles and what `kcc --emit=llvm-mlir` and later stages show.
/// Applies MLIR's command-line pass-manager options when `cliOptions`.
mlir::LogicalResult lowerForCpu(mlir::ModuleOp module,
                                const CpuOptions &options,
                                bool cliOptions = false);

/// One argument or result of the kc-level signature.
struct TensorSpec {
  Shape shape;
  DType dtype = DType::F32;
};

/// A compiled function before it is linked into a process: what build()
/// returns, load() links and the disk cache stores (engine/DiskCache.h).
struct CompiledArtifact {
  std::string name;
  std::vector<TensorSpec> args, results;
  /// (result, argument) pairs written over their argument.
  std::vector<std::pair<unsigned, unsigned>> inPlace;
  KernelCount kernels;
  /// kc-plan-memory's totals (no buffers), when the function was planned.
  std::optional<MemoryPlanReport> plan;
  /// The entry takes an arena of plan->arenaBytes as its trailing argument.
  bool arenaArg = false;
  /// Relocatable objects for the host, one per part of the module
  /// (aot::splitModule), that together define the packed entry
  /// (packedEntryName(name)).
  std::vector<std::string> objects;
  /// CpuOptions::keepIR's texts (empty otherwise; never stored on disk).
  std::string llvmDialect, llvmIR;
};

/// The symbol of the entry taking `void **` (one pointer to each argument
/// pointer, then to each result pointer) that build() adds beside `name`.
std::string packedEntryName(llvm::StringRef name);

class CompiledFunction {
public:
  /// Compiles `funcName` of `module` (the module is cloned, never changed):
  /// build(), then load().
  static CompiledFunction compile(mlir::ModuleOp module,
                                  llvm::StringRef funcName,
                                  const CpuOptions &options = {});
  /// Lowers and compiles `funcName` of `module` to an object; nothing is
  /// linked yet.
  static CompiledArtifact build(mlir::ModuleOp module, llvm::StringRef funcName,
                                const CpuOptions &options = {});
  /// Links `artifact`'s object into this process and allocates its arena.
  static CompiledFunction load(const CompiledArtifact &artifact);

  CompiledFunction(CompiledFunction &&) noexcept;
  CompiledFunction &operator=(CompiledFunction &&) noexcept;
  ~CompiledFunction();

  /// Runs on `args` and returns freshly allocated results; `args` are not
  /// changed (arguments updated in place are copied first).
  std::vector<NDArray> run(const std::vector<NDArray> &args) const;
  /// Runs on `args`, writing into `outs` (shapes and dtypes as the results).
  /// An output may not alias an argument, except that each result in
  /// inPlaceResults() is written over its argument (pass that argument's
  /// array as the output). Calls on one CompiledFunction must
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
  /// What kc-count-kernels and kc-plan-memory recorded in this function's
  /// own lowering: the kernels one call launches and its memory plan.
  const KernelCount &kernelCount() const;
  const std::optional<MemoryPlanReport> &memoryPlan() const;
  /// (result, argument) pairs the function writes over their argument
  /// (kc-mark-in-place proved it safe; the pipeline's in-place-updates
  /// option applied it, as CpuOptions does by default).
  const std::vector<std::pair<unsigned, unsigned>> &inPlaceResults() const;

private:
  struct Impl;
  explicit CompiledFunction(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace kcc

#endif // KCC_ENGINE_COMPILEDFUNCTION_H
