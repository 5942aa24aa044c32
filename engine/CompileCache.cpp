//===- CompileCache.cpp - Compiled functions keyed by IR and target -------===//

#include "engine/CompileCache.h"
#include "ir/KcAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/Statistic.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

#define DEBUG_TYPE "kcc-compile-cache"

STATISTIC(numCompiles, "Functions compiled");
STATISTIC(numHits, "Compile cache hits");

using namespace kcc;

CompileCache &CompileCache::global() {
  // Leaked on purpose: destroying ExecutionEngines from a static destructor
  // races LLVM's and OpenMP's own teardown at exit.
  static CompileCache *cache = new CompileCache;
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
  auto t = llvm::dyn_cast<mlir::RankedTensorType>(func.getArgument(0).getType());
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
  os << func.getSymName() << "|ir:"
     << llvm::format_hex_no_prefix(llvm::xxh3_64bits(text), 16)
     << "|batch:" << batchOf(func) << "|sig:" << func.getFunctionType() << "|"
     << cpu.key();
  return key;
}

CompileCache::Result CompileCache::compileUncached(mlir::ModuleOp module,
                                                   llvm::StringRef funcName,
                                                   const CpuOptions &cpu,
                                                   llvm::raw_ostream *log) {
  auto start = std::chrono::steady_clock::now();
  auto fn = std::make_shared<const CompiledFunction>(
      CompiledFunction::compile(module, funcName, cpu));
  Result result;
  result.function = std::move(fn);
  result.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  ++numCompiles;
  if (log) {
    int64_t batch = -1;
    if (auto f = module.lookupSymbol<mlir::func::FuncOp>(funcName))
      batch = batchOf(f);
    *log << "kcc: compiled " << funcName << " for batch " << batch << " in "
         << static_cast<int64_t>(result.seconds * 1e3 + 0.5) << " ms\n";
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
  std::string key = keyFor(func, cpu);
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
  Result result = compileUncached(module, funcName, cpu, log);
  ++compiles_;
  entries_.emplace(std::move(key), result.function);
  return result;
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
  compiles_ = hits_ = 0;
}
