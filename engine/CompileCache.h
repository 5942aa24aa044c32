//===- CompileCache.h - Compiled functions keyed by IR and target -*- C++ -*-===//
//
// Compiling a train step takes seconds; the same model at the same shapes
// for the same target must never compile twice in a process. The cache key
// is (function name, hash of the function's IR text, the batch and the
// signature, CpuOptions::key(): every pipeline option and the target): the
// IR text holds every shape and every hyper-parameter baked into the step,
// and none of the weight values (they are arguments), so two Executables of
// one model share one compiled function. Every compile is reported on the caller's
// stream; hits and compiles are counted.
//
// The compiled code does not refer to the MLIRContext it came from (the
// ExecutionEngine owns its LLVM module), so entries outlive the modules and
// contexts that produced them. Entries are never evicted.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_COMPILECACHE_H
#define KCC_ENGINE_COMPILECACHE_H

#include "engine/CompiledFunction.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace kcc {

class CompileCache {
public:
  /// The process-wide cache Executables use.
  static CompileCache &global();

  /// What a lookup returned.
  struct Result {
    std::shared_ptr<const CompiledFunction> function;
    bool hit = false;
    double seconds = 0; ///< compile time (0 on a hit)
  };

  /// The cache key of `func` compiled with `cpu` (see the file comment).
  static std::string keyFor(mlir::func::FuncOp func, const CpuOptions &cpu);
  /// The static batch of `func`: dim 0 of its first {kc.input} argument (or
  /// of its first argument), -1 when it has none.
  static int64_t batchOf(mlir::func::FuncOp func);

  /// Returns the compiled `funcName` of `module`, compiling it on a miss and
  /// reporting the compile on `log` (when not null). Compiles are serialized.
  Result getOrCompile(mlir::ModuleOp module, llvm::StringRef funcName,
                      const CpuOptions &cpu, llvm::raw_ostream *log);
  /// Compiles without looking up or storing (ExecOptions::useCache off).
  static Result compileUncached(mlir::ModuleOp module, llvm::StringRef funcName,
                                const CpuOptions &cpu, llvm::raw_ostream *log);

  int64_t compiles() const;
  int64_t hits() const;
  size_t size() const;
  /// Drops every entry and zeroes the counters.
  void clear();

private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CompiledFunction>> entries_;
  int64_t compiles_ = 0, hits_ = 0;
};

} // namespace kcc

#endif // KCC_ENGINE_COMPILECACHE_H
