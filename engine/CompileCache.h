//===- CompileCache.h - Compiled functions keyed by IR and target -*- C++
//-*-===//
//
// Compiling a train step takes seconds; the same model at the same shapes
// for the same target must never compile twice in a process, nor, with the
// disk layer, twice on a machine. The cache key
// is (function name, hash of the function's IR text, the batch and the
// signature, CpuOptions::key(): every pipeline option and the target): the
// IR text holds every shape and every hyper-parameter baked into the step,
// and none of the weight values (they are arguments), so two Executables of
// one model share one compiled function. Every compile and every load from
// disk is reported on the caller's stream; hits and compiles are counted.
//
// Two layers: in memory (CompiledFunctions, shared by the Executables of a
// process) and on disk (engine/DiskCache.h: object code and metadata, for
// the next process). A miss in memory looks on disk, a miss on disk
// compiles and stores in both. The global cache takes its disk layer from
// the environment (KCC_CACHE_DIR, see DiskCache.h); a CompileCache made
// directly has none until setDiskCache.
//
// The compiled code does not refer to the MLIRContext it came from (the
// JIT owns its object code), so entries outlive the modules and contexts
// that produced them. Entries are never evicted.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_ENGINE_COMPILECACHE_H
#define KCC_ENGINE_COMPILECACHE_H

#include "engine/CompiledFunction.h"
#include "engine/DiskCache.h"

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
  /// A cache in memory only.
  CompileCache();
  /// The process-wide cache Executables use, with the disk layer the
  /// environment names.
  static CompileCache &global();

  /// What a lookup returned.
  struct Result {
    std::shared_ptr<const CompiledFunction> function;
    /// Nothing was compiled: found in memory or on disk.
    bool hit = false;
    bool fromDisk = false;
    /// Compile time; on a disk hit, the time to key, read and link it; 0 on
    /// a hit in memory.
    double seconds = 0;
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

  /// Puts compiled functions on disk too (std::nullopt: in memory only).
  void setDiskCache(std::optional<DiskCache> disk);

  int64_t compiles() const;
  /// Hits in memory and on disk.
  int64_t hits() const;
  int64_t diskHits() const;
  size_t size() const;
  /// Drops every entry in memory and zeroes the counters (the disk layer
  /// keeps its entries).
  void clear();

private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const CompiledFunction>> entries_;
  std::optional<DiskCache> disk_;
  int64_t compiles_ = 0, hits_ = 0, diskHits_ = 0;
};

} // namespace kcc

#endif // KCC_ENGINE_COMPILECACHE_H
