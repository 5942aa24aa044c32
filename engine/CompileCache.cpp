//===- CompileCache.cpp - Compiled functions keyed by IR and target -------===//

#include "engine/CompileCache.h"
#include "engine/CompileTiming.h"
#include "ir/KcAttributes.h"
#include "runtime/Error.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <chrono>

#define DEBUG_TYPE "kcc-compile-cache"

STATISTIC(numCompiles, "Functions compiled");
STATISTIC(numHits, "Compile cache hits");
STATISTIC(numDiskHits, "Compile cache hits on disk");

using namespace kcc;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int64_t millis(double seconds) {
  return static_cast<int64_t>(seconds * 1e3 + 0.5);
}

int64_t batchOfFunction(mlir::ModuleOp module, llvm::StringRef funcName) {
  if (auto f = module.lookupSymbol<mlir::func::FuncOp>(funcName))
    return CompileCache::batchOf(f);
  return -1;
}

} // namespace

CompileCache::CompileCache() = default;

CompileCache &CompileCache::global() {
  // Leaked on purpose: destroying JITs from a static destructor races
  // LLVM's and OpenMP's own teardown at exit.
  static CompileCache *cache = [] {
    auto *c = new CompileCache;
    if (std::optional<std::string> folder = DiskCache::folderFromEnvironment())
      c->setDiskCache(DiskCache(std::move(*folder)));
    return c;
  }();
  return *cache;
}

int64_t CompileCache::batchOf(mlir::func::FuncOp func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (kc::isInputArg(func, i))
      if (auto t = llvm::dyn_cast<mlir::RankedTensorType>(
              func.getArgument(i).getType());
          t && t.getRank() > 0)
        return t.getDimSize(0);
  if (func.getNumArguments() == 0)
    return -1;
  auto t =
      llvm::dyn_cast<mlir::RankedTensorType>(func.getArgument(0).getType());
  return t && t.getRank() > 0 ? t.getDimSize(0) : -1;
}

std::string CompileCache::keyFor(mlir::func::FuncOp func,
                                 const CpuOptions &cpu) {
  // The default printer leaves locations out, so layer names in locations
  // do not split the cache; shapes and baked-in constants are in the text.
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    func->print(os);
  }
  std::string key;
  llvm::raw_string_ostream os(key);
  os << func.getSymName()
     << "|ir:" << llvm::format_hex_no_prefix(llvm::xxh3_64bits(text), 16)
     << "|batch:" << batchOf(func) << "|sig:" << func.getFunctionType() << "|"
     << cpu.key();
  return key;
}

CompileCache::Result CompileCache::compileUncached(mlir::ModuleOp module,
                                                   llvm::StringRef funcName,
                                                   const CpuOptions &cpu,
                                                   llvm::raw_ostream *log) {
  CompilePhase phase("compile @" + funcName.str());
  auto start = Clock::now();
  Result result;
  result.function = std::make_shared<const CompiledFunction>(
      CompiledFunction::compile(module, funcName, cpu));
  result.seconds = secondsSince(start);
  ++numCompiles;
  if (log) {
    *log << "kcc: compiled " << funcName << " for batch "
         << batchOfFunction(module, funcName) << " in "
         << millis(result.seconds) << " ms\n";
    log->flush();
  }
  return result;
}

CompileCache::Result CompileCache::getOrCompile(mlir::ModuleOp module,
                                                llvm::StringRef funcName,
                                                const CpuOptions &cpu,
                                                llvm::raw_ostream *log) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(funcName);
  if (!func) // let compile() report it
    return compileUncached(module, funcName, cpu, log);
  CompilePhase phase("compile @" + funcName.str());
  auto start = Clock::now();
  std::string key;
  {
    CompilePhase keyPhase("compile cache key");
    key = keyFor(func, cpu);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    ++hits_;
    ++numHits;
    LLVM_DEBUG(llvm::dbgs() << "cache hit: " << key << "\n");
    Result result;
    result.function = it->second;
    result.hit = true;
    return result;
  }

  // The texts of keepIR are not stored: such a compile skips the disk.
  bool useDisk = disk_ && !cpu.keepIR;
  if (useDisk) {
    std::optional<CompiledArtifact> artifact;
    {
      CompilePhase lookup("disk cache lookup");
      artifact = disk_->load(key, log);
    }
    if (artifact) {
      try {
        Result result;
        result.function = std::make_shared<const CompiledFunction>(
            CompiledFunction::load(*artifact));
        result.hit = result.fromDisk = true;
        result.seconds = secondsSince(start);
        ++hits_;
        ++diskHits_;
        ++numHits;
        ++numDiskHits;
        if (log) {
          *log << "kcc: loaded " << funcName << " for batch " << batchOf(func)
               << " from the cache in " << millis(result.seconds) << " ms\n";
          log->flush();
        }
        entries_.emplace(std::move(key), result.function);
        return result;
      } catch (const Error &e) {
        // A well-formed entry the JIT cannot link: compile it afresh.
        if (log)
          *log << "kcc: note: compile cache: cannot link "
               << disk_->pathFor(key) << " (" << e.what() << "); compiling\n";
      }
    }
  }

  Result result;
  CompiledArtifact artifact = CompiledFunction::build(module, funcName, cpu);
  result.function = std::make_shared<const CompiledFunction>(
      CompiledFunction::load(artifact));
  result.seconds = secondsSince(start);
  ++numCompiles;
  ++compiles_;
  if (log) {
    *log << "kcc: compiled " << funcName << " for batch " << batchOf(func)
         << " in " << millis(result.seconds) << " ms\n";
    log->flush();
  }
  if (useDisk) {
    CompilePhase store("disk cache store");
    disk_->store(key, artifact, log);
  }
  entries_.emplace(std::move(key), result.function);
  return result;
}

void CompileCache::setDiskCache(std::optional<DiskCache> disk) {
  std::lock_guard<std::mutex> lock(mutex_);
  disk_ = std::move(disk);
}

int64_t CompileCache::diskHits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return diskHits_;
}

int64_t CompileCache::compiles() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return compiles_;
}

int64_t CompileCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

size_t CompileCache::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

void CompileCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  compiles_ = hits_ = diskHits_ = 0;
}
