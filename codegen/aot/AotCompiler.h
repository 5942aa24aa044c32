//===- AotCompiler.h - LLVM dialect to object code, ahead of time -*- C++
//-*-===//
//
// The back end of `kcc --emit=llvm|obj|lib`: translate a module in the LLVM
// dialect (the output of kc-cpu-pipeline) to LLVM IR, optimize it at -O<n>
// for a TargetMachine of the host triple, and emit an object file. The code
// is position independent in every case, so one object links both into a
// PIE executable (Debian's default) and into a shared library.
//
//===----------------------------------------------------------------------===//

#ifndef KCC_CODEGEN_AOT_AOTCOMPILER_H
#define KCC_CODEGEN_AOT_AOTCOMPILER_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir {
class ModuleOp;
} // namespace mlir

namespace kcc {
namespace aot {

/// What to compile for. The triple is always the host's.
struct TargetOptions {
  /// LLVM CPU name; empty or "native" means the host CPU.
  std::string cpu;
  /// Comma-separated +feature/-feature list; empty means the host's features
  /// when the CPU is the host's, none otherwise.
  std::string features;
  /// LLVM optimization level, 0-3: the machine-code level, and at 1-3 the
  /// IR pipeline kernelPipeline() (at 0 LLVM's -O0).
  unsigned optLevel = 3;
  /// An LLVM IR pipeline in opt's -passes syntax run instead, e.g.
  /// "default<O3>" for LLVM's -O3 (empty: by optLevel). No pipeline
  /// unrolls loops.
  std::string passes;
};

/// kcc's LLVM IR pipeline at -O1 to -O3, in opt's -passes syntax.
llvm::StringRef kernelPipeline();

/// A TargetMachine for the host triple with PIC relocations.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(const TargetOptions &options);

/// Translates `module` (LLVM dialect only) to LLVM IR in `llvmContext` and
/// sets the triple and data layout of `tm`.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::ModuleOp module, llvm::LLVMContext &llvmContext,
                  llvm::TargetMachine &tm);

/// Runs the IR pipeline `target` names (target.passes, else by
/// target.optLevel) on `module` with LLVM's new pass manager for `tm`.
llvm::Error optimize(llvm::Module &module, llvm::TargetMachine &tm,
                     const TargetOptions &target);

/// Emits `module` as an ELF object into `buffer`.
llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                       llvm::SmallVectorImpl<char> &buffer);

/// One part of a module (splitModule) as LLVM IR, in a context of its own
/// so that parts optimize on different threads.
struct LLVMPart {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  /// Only cold functions (kColdAttrName): machine code at
  /// CodeGenOptLevel::None after the same IR pipeline.
  bool cold = false;
  LLVMPart();
  LLVMPart(LLVMPart &&);
  LLVMPart &operator=(LLVMPart &&);
  ~LLVMPart();
};

/// splitModule(module), each part translated to LLVM IR for `target`.
llvm::Expected<std::vector<LLVMPart>>
translateInParts(mlir::ModuleOp module, const TargetOptions &target);

/// Optimizes each part at target.optLevel and emits it as an object, the
/// parts on as many threads as the process may use (at most one each):
/// one object per part, in the order of `parts`.
llvm::Expected<std::vector<std::string>>
optimizeAndEmitParts(std::vector<LLVMPart> &parts, const TargetOptions &target);

/// translateInParts and optimizeAndEmitParts at once: while the calling
/// thread translates the parts one by one, the other threads already
/// optimize and emit those it has translated. `prepare`, when given, runs
/// on each part right after its translation, on the calling thread, in part
/// order (to add an entry point, to print the IR); `translated` once all are
/// translated. One object per part, in part order.
llvm::Expected<std::vector<std::string>> translateOptimizeAndEmitParts(
    mlir::ModuleOp module, const TargetOptions &target,
    llvm::function_ref<llvm::Error(llvm::Module &)> prepare = {},
    llvm::function_ref<void()> translated = {});

/// Links the objects at `objectPaths` into a shared library at `outputPath`
/// (written as is; the caller renames), with the compiler driver found at
/// configure time and the kcc runtime archives (KCCLibraryCalls,
/// KCCKernels) plus what they need: oneDNN, OpenMP, libm. The linker's own
/// messages are returned in the error.
llvm::Error linkSharedLibrary(llvm::ArrayRef<std::string> objectPaths,
                              llvm::StringRef outputPath);

/// Links the objects at `objectPaths` into one relocatable object at
/// `outputPath` (`ld -r` through the same driver).
llvm::Error linkRelocatable(llvm::ArrayRef<std::string> objectPaths,
                            llvm::StringRef outputPath);

} // namespace aot
} // namespace kcc

#endif // KCC_CODEGEN_AOT_AOTCOMPILER_H
